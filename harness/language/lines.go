package language

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/txtar"
)

// Which line of which file runs a command. testscript tells a command
// neither (a TestScript keeps its file and line unexported), so racekit
// keeps its own table of each script's lines: it knows the files it gives
// testscript and the name testscript gives each (scriptNames), reads each
// script as testscript does (readScript), and, since testscript runs a
// script's lines in order, takes the line that runs a command of racekit's
// to be the next one that names it (scriptLines.next). A line that
// testscript's own command stopped the script at is the one its failure
// names (scriptLines.stoppedAt). TestScriptLines holds testscript to all of
// it: a go-internal release that named scripts, numbered lines or reported
// a failure otherwise would fail it.

// scriptNames returns the files testscript runs for dir and files (as
// testscript.Params has them), by the name testscript gives each: its base
// name without .txtar or .txt, and #1, #2, ... after a name already taken.
// A folder that cannot be read names nothing: testscript reports it.
func scriptNames(dir string, files []string) map[string]string {
	if dir != "" || files == nil {
		files = nil
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if n := e.Name(); strings.HasSuffix(n, ".txtar") || strings.HasSuffix(n, ".txt") {
				files = append(files, filepath.Join(dir, n))
			}
		}
	}
	out := map[string]string{}
	for _, file := range files {
		name := filepath.Base(file)
		if n, ok := strings.CutSuffix(name, ".txt"); ok {
			name = n
		} else if n, ok := strings.CutSuffix(name, ".txtar"); ok {
			name = n
		}
		prefix := name
		for i := 1; out[name] != ""; i++ {
			name = prefix + "#" + strconv.Itoa(i)
		}
		out[name] = file
	}
	return out
}

// workName returns the name of the script testscript runs in workDir, its
// $WORK: testscript makes it as script-NAME.
func workName(workDir string) string {
	return strings.TrimPrefix(filepath.Base(workDir), "script-")
}

// scriptLines is the table of one script's lines.
type scriptLines struct {
	file  string
	lines []scriptLine
	// ours reports whether a command name is racekit's, not testscript's
	// own.
	ours func(name string) bool

	mu sync.Mutex
	// cursor is the index of the first line after the last that ran a
	// command of racekit's.
	cursor int
}

// scriptLine is one line of a script's comment: its number and its words
// as testscript parses them, before $VAR expansion.
type scriptLine struct {
	n     int
	words [][]chunk
}

// chunk is part of a word: quoted ('...'), which testscript does not
// expand, or not.
type chunk struct {
	text   string
	quoted bool
}

// readScript reads file's script, the comment of its txtar archive, as
// testscript reads it, and returns it with the table of its lines.
func readScript(file string, ours func(string) bool) (string, *scriptLines, error) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		return "", nil, err
	}
	script := string(ar.Comment)
	t := &scriptLines{file: file, ours: ours}
	for i, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(line, "#") {
			continue // a phase
		}
		if words := splitWords(line); len(words) > 0 {
			t.lines = append(t.lines, scriptLine{n: i + 1, words: words})
		}
	}
	return script, t, nil
}

// splitWords splits line into words as testscript's parse does: spaces
// and tabs separate words, a # outside quotes ends the line, and '...'
// quotes (” is a quote inside them). A line whose quote does not end has
// no words: testscript fails it before it runs anything.
func splitWords(line string) [][]chunk {
	var (
		words  [][]chunk
		word   []chunk
		start  = -1
		quoted = false
	)
	for i := 0; ; i++ {
		if !quoted && (i >= len(line) || line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '#') {
			if start >= 0 {
				word = append(word, chunk{text: line[start:i]})
				words = append(words, word)
				start, word = -1, nil
			}
			if i >= len(line) || line[i] == '#' {
				return words
			}
			continue
		}
		if i >= len(line) {
			return nil // an unterminated quote
		}
		if line[i] == '\'' {
			if !quoted {
				if start >= 0 {
					word = append(word, chunk{text: line[start:i]})
				}
				start, quoted = i+1, true
				continue
			}
			if i+1 < len(line) && line[i+1] == '\'' {
				word = append(word, chunk{text: line[start:i] + "'", quoted: true})
				start = i + 2
				i++
				continue
			}
			word = append(word, chunk{text: line[start:i], quoted: true})
			start, quoted = i+1, false
			continue
		}
		if start < 0 {
			start = i
		}
	}
}

// command returns l's command as testscript runs it, with getenv's values
// for $VAR: its name, its arguments, whether it is negated (!) and whether
// a [condition] comes first, which may skip it.
func (l scriptLine) command(getenv func(string) string) (name string, args []string, neg, conditional bool) {
	for _, w := range l.words {
		var s strings.Builder
		for _, c := range w {
			if c.quoted {
				s.WriteString(c.text)
				continue
			}
			s.WriteString(os.Expand(c.text, func(key string) string {
				if k, ok := strings.CutSuffix(key, "@R"); ok {
					return regexp.QuoteMeta(getenv(k))
				}
				return getenv(key)
			}))
		}
		args = append(args, s.String())
	}
	for len(args) > 0 && strings.HasPrefix(args[0], "[") && strings.HasSuffix(args[0], "]") {
		args, conditional = args[1:], true
	}
	if len(args) > 0 && args[0] == "!" {
		args, neg = args[1:], true
	}
	if len(args) == 0 {
		return "", nil, neg, conditional
	}
	return args[0], args[1:], neg, conditional
}

// next returns the line that runs command name (negated with neg) with
// args now, and takes it as run: the first line not run yet that names
// it. A line behind a condition, which testscript may have skipped, must
// also have args. It returns 0 when no line does.
func (t *scriptLines) next(name string, neg bool, args []string, getenv func(string) string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := t.cursor; i < len(t.lines); i++ {
		n, a, ng, cond := t.lines[i].command(getenv)
		if n != name || ng != neg || cond && !slices.Equal(a, args) {
			continue
		}
		t.cursor = i + 1
		return t.lines[i].n
	}
	return 0
}

// pos returns file:line.
func (t *scriptLines) pos(line int) string { return fmt.Sprintf("%s:%d", t.file, line) }

// stoppedAt returns the line at which a command of testscript's own
// stopped the script, or 0 when it cannot tell: one of the lines of
// testscript's commands after the last line of racekit's that ran, the
// one that log, the script's log, says failed (testscript's "FAIL:
// FILE:LINE: ..."), or else the first skip among them.
func (t *scriptLines) stoppedAt(log string) int {
	t.mu.Lock()
	after := t.lines[t.cursor:]
	t.mu.Unlock()
	none := func(string) string { return "" }
	theirs := map[int]bool{}
	skip := 0
	for _, l := range after {
		name, _, _, _ := l.command(none)
		if name == "" || t.ours(name) {
			continue
		}
		theirs[l.n] = true
		if name == "skip" && skip == 0 {
			skip = l.n
		}
	}
	failed := regexp.MustCompile(`(?m)^FAIL: `+regexp.QuoteMeta(t.file)+`:([0-9]+): `).FindAllStringSubmatch(log, -1)
	if len(failed) > 0 {
		if n, err := strconv.Atoi(failed[len(failed)-1][1]); err == nil && theirs[n] {
			return n
		}
	}
	return skip
}
