package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A public run's nodes after its first start from spare jails made inside
// the run's namespace: the same namespace as the first node's, with its
// routes.
func TestNetworkPublicRunSpares(t *testing.T) {
	checkRunSpares(t, netSandbox(t, Config{Network: NetworkPublic}))
}

// checkRunSpares runs two nodes in j's run, the second from a spare.
func checkRunSpares(t *testing.T, j *Jail) {
	t.Helper()
	s := j.Sandbox
	script := "readlink /proc/self/ns/net; grep -c '^[^ ]*	0000000A	' /proc/net/route"
	node := func() (Result, string) {
		var out combined
		stdout, stderr := out.writers() // spares serve distinct writers only
		res, err := Run(context.Background(), Cmd{Argv: []string{"sh", "-c", script}, Dir: j.Workspace, Env: jailEnv(),
			Stdout: stdout, Stderr: stderr, Jail: j})
		if err != nil {
			t.Fatal(err)
		}
		return res, out.String()
	}
	first, firstOut := node()
	if first.spare {
		t.Fatal("the run's first node started from a spare, which it has none of")
	}
	s.nets.mu.Lock()
	pool := s.nets.nets[j.Run].spares
	s.nets.mu.Unlock()
	if pool == nil {
		t.Fatal("the run's namespace has no spare pool")
	}
	for deadline := time.Now().Add(30 * time.Second); pool.ready() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no spare jail in the run's namespace after 30s")
		}
	}
	second, secondOut := node()
	if !second.spare {
		t.Error("the run's second node did not start from the run's spare")
	}
	if secondOut != firstOut {
		t.Errorf("the spare's namespace and routes: %q, the first node's %q", secondOut, firstOut)
	}
	if !strings.HasSuffix(firstOut, "\n1\n") {
		t.Errorf("the first node's output %q: want its namespace, then 1 route for 10.0.0.0/8", firstOut)
	}
}
