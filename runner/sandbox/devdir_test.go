package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// A /dev directory that is not as the bot made it (an entry gone, one
// added, a mode changed) is made anew by the next Sandbox's devDir, not
// shown to jails as it is.
func TestDevDirRemadeWhenChanged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a bot running as root makes a /dev directory")
	}
	state := t.TempDir()
	dir := devDir(state)
	if dir == "" {
		t.Skip("no /dev directory here (a state dir mounted nodev?)")
	}
	if err := checkDevDir(dir); err != nil {
		t.Fatalf("a fresh /dev directory: %v", err)
	}
	for name, change := range map[string]func() error{
		"entry removed": func() error { return os.Remove(filepath.Join(dir, "null")) },
		"entry added":   func() error { return os.WriteFile(filepath.Join(dir, "tty"), nil, 0o666) },
		"mode changed":  func() error { return os.Chmod(filepath.Join(dir, "zero"), 0o600) },
		"link changed": func() error {
			os.Remove(filepath.Join(dir, "random"))
			return os.Symlink("/workspace", filepath.Join(dir, "random"))
		},
	} {
		os.Chmod(dir, 0o755)
		if err := change(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		os.Chmod(dir, 0o555)
		if checkDevDir(dir) == nil {
			t.Errorf("%s: checkDevDir found nothing wrong", name)
		}
		if again := devDir(state); again != dir {
			t.Fatalf("%s: devDir = %q, want %q", name, again, dir)
		}
		if err := checkDevDir(dir); err != nil {
			t.Errorf("%s: not made anew: %v", name, err)
		}
	}
}
