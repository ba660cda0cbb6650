package sandbox

import (
	"os/exec"
	"strings"
	"testing"
)

// A node cannot make a user namespace of its own (bwrap --disable-userns,
// where the installed bwrap has it): `unshare -U` fails in a jail, cold
// and prewarmed, on every network mode; the same jail without the flag,
// as before, lets it.
func TestJailNoNestedUserns(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare (util-linux)")
	}
	const script = "unshare -U true 2>/dev/null && echo NESTED || echo REFUSED"
	for _, network := range []Network{NetworkNone, NetworkPublic, NetworkHost} {
		t.Run(string(network), func(t *testing.T) {
			if network == NetworkPublic {
				if _, err := findTool("", "pasta", HostEnv()["PATH"], ""); err != nil {
					t.Skip("no pasta here: " + PastaFix)
				}
			}
			s := newTestSandbox(t, Config{Network: network})
			if !s.noUserns {
				t.Skipf("this bwrap (%s) has no --disable-userns (bubblewrap before 0.8.0): nodes may nest user namespaces", s.bwrap)
			}
			j := &Jail{Sandbox: s, Workspace: t.TempDir(), Run: t.Name()}
			c := Cmd{Argv: []string{"sh", "-c", script}, Dir: j.Workspace, Env: jailEnv(), Jail: j}
			res, out := runOut(t, c)
			if res.ExitCode != 0 || strings.TrimSpace(out) != "REFUSED" {
				t.Errorf("%s in a cold jail: exit %d, %q; want REFUSED", unshare, res.ExitCode, out)
			}
			prewarm(t, s, c)
			res, out = runOut(t, c)
			if !res.prewarmed || strings.TrimSpace(out) != "REFUSED" {
				t.Errorf("in a prewarmed jail (prewarmed %v): %q; want REFUSED", res.prewarmed, out)
			}

			// Without the flag (an older bwrap), the node nests one.
			old := newTestSandbox(t, Config{Network: network})
			old.noUserns = false
			old.Close() // cold
			j = &Jail{Sandbox: old, Workspace: t.TempDir(), Run: t.Name() + "-old"}
			if _, out := runOut(t, Cmd{Argv: []string{"sh", "-c", script}, Dir: j.Workspace, Env: jailEnv(), Jail: j}); strings.TrimSpace(out) != "NESTED" {
				t.Errorf("without --disable-userns: %q; want NESTED (else this test proves nothing)", out)
			}
		})
	}
}
