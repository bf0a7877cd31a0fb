package language

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckScript reports a scenario file that testscript could not read. Its
// txtar parser panics on a file marker with an empty name ("-- --"), which
// would take the whole process, and the control plane's cleanup, with it;
// the fuzzer found this. Call CheckScript on every file before handing it to
// testscript: RunFiles and the scenarios' runner do.
func CheckScript(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read scenario: %w", err)
	}
	return CheckArchive(filepath.Base(file), data)
}

// CheckArchive finds the first line that would break the txtar parser.
func CheckArchive(name string, data []byte) error {
	for i, line := range bytes.Split(data, []byte("\n")) {
		l := strings.TrimSuffix(string(line), "\r")
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") && len(l) < len("-- x --") {
			return fmt.Errorf("%s:%d: malformed file marker %q: want -- NAME --", name, i+1, l)
		}
	}
	return nil
}
