package harness

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"
)

// TestCrashNamed kills the API server of a control plane of its own in the
// middle of a scenario and checks that the scenario fails with a message
// naming the crash, not with a timeout or a bare refused connection.
func TestCrashNamed(t *testing.T) {
	c, err := StartControlPlane(context.Background(), WithoutSignalHandler())
	assert.NilError(t, err)
	defer c.Close()
	assert.NilError(t, c.Crashed())

	file := webAppScript(t, "crash.txtar", `# the API server dies after the first reconcile read
create webapp.yaml
on after controller get webapps/web 1st: test-kill-apiserver
reconcile webapps/web
`)
	killTarget = c
	defer func() { killTarget = nil }()
	opts := refOptions(t, c, "")
	opts.Files = []string{file}
	res := RunFiles(context.Background(), c, opts)
	assert.Equal(t, len(res), 1)
	assert.Assert(t, !res[0].Passed)
	assert.Assert(t, strings.Contains(res[0].Log, "crash.txtar:4: reconcile webapps/web: the control plane crashed: kube-apiserver is no longer running"), "%s", res[0].Log)
}

// killTarget is the control plane test-kill-apiserver kills.
var killTarget *ControlPlane

// crashCommands are the commands only the crash test registers.
var crashCommands = []*Command{
	{
		Name: "test-kill-apiserver", Group: "setup", MinArgs: 0, MaxArgs: 0, Hookable: true,
		Summary: "kill the API server of the crash test's control plane (tests only)",
		Run: func(sc *Scenario, _ Invocation) error {
			pid := killTarget.PID("kube-apiserver")
			if pid == 0 {
				return os.ErrNotExist
			}
			// envtest reaps it; until then it is a zombie, which crashed
			// counts as dead.
			return syscall.Kill(pid, syscall.SIGKILL)
		},
	},
}
