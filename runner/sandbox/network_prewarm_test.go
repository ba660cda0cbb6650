package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// A public run's node after its first starts from the jail prewarmed for
// it (a bwrap started during the previous node's checkpoint), inside the
// run's namespace: the same namespace as the first node's, with its
// routes, and the resolv.conf of network public.
func TestNetworkPublicRunPrewarmed(t *testing.T) {
	checkRunPrewarmed(t, netSandbox(t, Config{Network: NetworkPublic}))
}

// checkRunPrewarmed runs two nodes in j's run, the first cold and the
// second prewarmed.
func checkRunPrewarmed(t *testing.T, j *Jail) {
	t.Helper()
	script := "readlink /proc/self/ns/net; grep -c '^[^ ]*	0000000A	' /proc/net/route; cat /etc/resolv.conf"
	c := Cmd{Argv: []string{"sh", "-c", script}, Dir: j.Workspace, Env: jailEnv(), Jail: j}
	node := func() (Result, string) {
		var out combined
		c := c
		c.Stdout, c.Stderr = out.writers() // prewarmed jails serve distinct writers only
		res, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 0 {
			t.Fatalf("exit %d: %s", res.ExitCode, out.String())
		}
		return res, out.String()
	}
	first, firstOut := node()
	if first.prewarmed {
		t.Fatal("the run's first node started prewarmed, with nothing prewarmed for it")
	}
	prewarm(t, j.Sandbox, c)
	second, secondOut := node()
	if !second.prewarmed {
		t.Error("the run's second node did not start from the jail prewarmed for it")
	}
	if secondOut != firstOut {
		t.Errorf("the prewarmed jail's namespace, routes and resolv.conf: %q, the first node's %q", secondOut, firstOut)
	}
	if _, rest, _ := strings.Cut(firstOut, "\n"); !strings.HasPrefix(rest, "1\n") ||
		!strings.Contains(rest, "nameserver "+dnsForward.String()+"\n") {
		t.Errorf("the first node's output %q: want its namespace, 1 route for 10.0.0.0/8, then nameserver %s", firstOut, dnsForward)
	}
}

// On an image root, network public's resolv.conf is bound over the
// image's /etc/resolv.conf, by descriptor: over a file the image has, and
// where it has none or a link there (its /etc then split), with the rest
// of the image's /etc still shown.
func TestNetworkPublicImageResolvConf(t *testing.T) {
	host := netSandbox(t, Config{Network: NetworkPublic})
	for name, edit := range map[string]func(root string){
		"file": func(root string) {
			imagetest.WriteFile(t, root, "etc/resolv.conf", "nameserver 192.0.2.1\n", 0o644)
		},
		"missing": func(root string) {},
		"link": func(root string) {
			if err := os.Symlink("../run/systemd/resolve/stub-resolv.conf", filepath.Join(root, "etc/resolv.conf")); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			imagetest.Rootfs(t, root, "sh", "cat")
			imagetest.WriteFile(t, root, "etc/marker", "IMAGE-ETC\n", 0o644)
			edit(root)
			s := host.Sandbox.WithImage(Image{Root: root, Name: "test-image", Env: []string{"PATH=/usr/bin:/bin"}})
			j := &Jail{Sandbox: s, Workspace: t.TempDir(), Run: host.Run}
			env := NodeEnv(EnvSpec{Image: s.ImageEnv(), Host: HostEnv()})
			res, out := runOut(t, Cmd{Argv: []string{"sh", "-c", "cat /etc/resolv.conf /etc/marker"}, Dir: j.Workspace, Env: env, Jail: j})
			if res.ExitCode != 0 || !strings.Contains(out, "nameserver "+dnsForward.String()+"\n") ||
				strings.Contains(out, "192.0.2.1") || !strings.HasSuffix(out, "IMAGE-ETC\n") {
				t.Errorf("exit %d, output %q: want network public's resolv.conf and the image's /etc/marker", res.ExitCode, out)
			}
		})
	}
}

// A host jail of network public reads the forwarder's resolv.conf from
// its /etc view, which holds it: no file is bound over it, as each bind
// costs every start.
func TestNetworkPublicHostResolvConfInView(t *testing.T) {
	j := netSandbox(t, Config{Network: NetworkPublic})
	res, out := runOut(t, Cmd{Argv: []string{"sh", "-c", `cat /etc/resolv.conf
		awk '$5 ~ "^/etc(/|$)" { print "MOUNT " $5 }' /proc/self/mountinfo`},
		Dir: j.Workspace, Env: jailEnv(), Jail: j})
	if want := string(publicResolv()) + "MOUNT /etc\n"; res.ExitCode != 0 || out != want {
		t.Errorf("exit %d, output %q; want %q", res.ExitCode, out, want)
	}
}
