package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/internal/testnet"
)

// The user the tests of a bot that is not root run as.
const testUser = "10001"

// TestNetworkPublicNotRoot runs TestNetworkPublicAsUser as an
// unprivileged user (the image's), in a copy of this test binary that
// user may run, against the test internet it makes as root.
func TestNetworkPublicNotRoot(t *testing.T) {
	in := testnet.New(t) // skips unless root
	if _, err := findTool("", "pasta", HostEnv()["PATH"], ""); err != nil {
		t.Skip("no pasta here: " + PastaFix)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv (util-linux) to run as another user")
	}
	if !executable("/usr/bin/python3") {
		t.Skip("no /usr/bin/python3")
	}
	tcpPort, _ := listen(t, in.NS, "tcp", in.Public.String()+":0", "hello from the internet")
	privPort, _ := listen(t, in.NS, "tcp", in.Private.String()+":0", "hello from the company network")
	hostPort, hostGot := listen(t, "", "tcp", "127.0.0.1:0", "postgres")

	dir, err := os.MkdirTemp("", "kilroy-user-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "sandbox.test")
	if err := copyExecutable(bin); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, bin} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil || os.Chown(home, 10001, 10001) != nil {
		t.Fatalf("home for %s: %v", testUser, err)
	}
	argv := []string{setpriv, "--reuid", testUser, "--regid", testUser, "--clear-groups", "--",
		bin, "-test.run", "^TestNetworkPublicAsUser$", "-test.v", "-test.count=1"}
	if fi, err := os.Stat("/dev/net/tun"); err == nil && fi.Mode().Perm()&0o006 != 0o006 {
		// pasta of an unprivileged user opens /dev/net/tun, which most
		// hosts let anyone open (mode 0666), but not this one: the user's
		// test runs in a mount namespace where it may.
		tun := filepath.Join(dir, "dev")
		if err := os.Mkdir(tun, 0o755); err != nil {
			t.Fatal(err)
		}
		argv = append([]string{"unshare", "-m", "--propagation", "private", "sh", "-c",
			`mount -t tmpfs -o size=4k tmpfs "$0" && mknod -m 666 "$0/tun" c 10 200 && mount --bind "$0/tun" /dev/net/tun && exec "$@"`,
			tun}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = home
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + home, "TMPDIR=" + home,
		"KILROY_TEST_AS_USER=1",
		fmt.Sprintf("KILROY_TEST_TARGETS=tcp:%s:%d tcp:%s:%d tcp:127.0.0.1:%d", in.Public, tcpPort, in.Private, privPort, hostPort)}
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestNetworkPublicAsUser")) {
		t.Fatalf("as user %s: %v; output:\n%s", testUser, err, out)
	}
	t.Logf("as user %s:\n%s", testUser, out)
	if len(hostGot) > 0 {
		t.Errorf("the host's loopback listener got a %s", <-hostGot)
	}
}

// copyExecutable copies this test binary to path.
func copyExecutable(path string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	in, err := os.Open(self)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestNetworkPublicAsUser is TestNetworkPublicNotRoot's part as the
// unprivileged user: network public works for a bot that is not root.
// The first target must be reached, the others (a private address, the
// host's loopback) not, and the forward DNS address only on UDP port 53.
// A run's second node starts from the jail prewarmed for it, in the
// run's namespaces.
func TestNetworkPublicAsUser(t *testing.T) {
	if os.Getenv("KILROY_TEST_AS_USER") != "1" {
		t.Skip("run by TestNetworkPublicNotRoot")
	}
	if os.Geteuid() == 0 {
		t.Fatal("running as root")
	}
	targets := strings.Fields(os.Getenv("KILROY_TEST_TARGETS"))
	fwd := dnsForward.String()
	blocked := append(targets[1:], "tcp:"+fwd+":53", "tcp:"+fwd+":80", "udp:"+fwd+":54", "tcp:169.254.169.254:80")
	j := netSandbox(t, Config{Network: NetworkPublic, StateDir: t.TempDir()})
	checkRunPrewarmed(t, &Jail{Sandbox: j.Sandbox, Workspace: t.TempDir(), Run: "prewarmed"})
	got := probeLines(t, j, true, append([]string{targets[0], "resolv"}, blocked...)...)
	if want := "REPLY hello from the internet"; got[targets[0]] != want {
		t.Errorf("%s: %q, want %q", targets[0], got[targets[0]], want)
	}
	if want := "REPLY nameserver " + fwd; got["resolv"] != want {
		t.Errorf("the node's /etc/resolv.conf: %q, want %q", got["resolv"], want)
	}
	for _, target := range blocked {
		if g := got[target]; !strings.Contains(g, "No route to host") && !strings.Contains(g, "Connection refused") ||
			!strings.HasSuffix(g, " 0.0s") {
			t.Errorf("%s: %q, want it refused at once", target, g)
		}
	}
}
