package controlplane

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// Crashed returns an error naming each control-plane process that is no
// longer running, with the end of its output, or nil when both run. A
// scenario command that failed asks it, so that a crash reads as a crash
// and not as a refused connection or a timeout.
func (cp *ControlPlane) Crashed() error {
	var dead []string
	for name, dir := range cp.processDirs() {
		if !processRunning(name, dir) {
			dead = append(dead, name)
		}
	}
	if len(dead) == 0 {
		return nil
	}
	sort.Strings(dead) // etcd before kube-apiserver, whatever the map's order
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
func processRunning(name, dir string) bool { return childPID(name, dir) != 0 }

// childPID returns the process ID of the running child of this process
// called name with dir on its command line, or 0 if there is none.
func childPID(name, dir string) int {
	for _, c := range controlPlaneChildren() {
		if c.comm == name && slices.ContainsFunc(c.args, func(a string) bool { return strings.Contains(a, dir) }) {
			return c.pid
		}
	}
	return 0
}

// killProcesses sends SIGKILL to kube-apiserver's and etcd's process
// groups (envtest starts each in a group of its own). envtest's Stop then
// finds them exited, reaps them and removes their folders.
func (cp *ControlPlane) killProcesses() {
	for name, dir := range cp.processDirs() {
		if pid := childPID(name, dir); pid != 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
}

// processDirs maps each control-plane process to the folder that names it
// on its command line.
func (cp *ControlPlane) processDirs() map[string]string {
	dirs := map[string]string{}
	if dir := cp.env.ControlPlane.APIServer.CertDir; dir != "" {
		dirs["kube-apiserver"] = dir
	}
	if dir := cp.env.ControlPlane.Etcd.DataDir; dir != "" {
		dirs["etcd"] = dir
	}
	return dirs
}

// PID returns the process ID of the control plane's running process called
// name (kube-apiserver, etcd), or 0: for a test that kills it.
func (cp *ControlPlane) PID(name string) int { return childPID(name, cp.processDirs()[name]) }

// EtcdURL is where etcd listens.
func (cp *ControlPlane) EtcdURL() *url.URL { return cp.env.ControlPlane.Etcd.URL }
