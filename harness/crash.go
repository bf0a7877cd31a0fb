package harness

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// crashed returns an error naming each control-plane process that is no
// longer running, with the end of its output, or nil when both run. A
// scenario command that failed asks it, so that a crash reads as a crash
// and not as a refused connection or a timeout.
func (cp *ControlPlane) crashed() error {
	var dead []string
	for name, dir := range map[string]string{
		"kube-apiserver": cp.env.ControlPlane.APIServer.CertDir,
		"etcd":           cp.env.ControlPlane.Etcd.DataDir,
	} {
		if dir != "" && !processRunning(name, dir) {
			dead = append(dead, name)
		}
	}
	if len(dead) == 0 {
		return nil
	}
	out := strings.TrimRight(cp.Output(), "\n")
	if out == "" {
		return fmt.Errorf("the control plane crashed: %s is no longer running (it wrote nothing)", strings.Join(dead, " and "))
	}
	lines := strings.Split(out, "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return fmt.Errorf("the control plane crashed: %s is no longer running; the last of the control plane's output:\n%s",
		strings.Join(dead, " and "), strings.Join(lines, "\n"))
}

// processRunning reports whether a child of this process called name runs
// with dir on its command line (envtest gives each process its own folder).
func processRunning(name, dir string) bool {
	self := os.Getpid()
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		comm, err := os.ReadFile(filepath.Join(p, "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != name {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		if _, ppid, err := procStatus(atoi(filepath.Base(p))); err == nil && ppid == self && !zombie(p) {
			return true
		}
	}
	return false
}

func zombie(procDir string) bool {
	stat, err := os.ReadFile(filepath.Join(procDir, "stat"))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}
