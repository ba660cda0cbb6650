package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Argv[0] is found in the PATH of Cmd.Env, never in the test process's.
func TestRunUsesPathOfEnv(t *testing.T) {
	bin := t.TempDir()
	writeScript(t, bin, "mytool", "echo from mytool\n")
	out := NewTail(1024)
	c := Cmd{Argv: []string{"mytool"}, Env: []string{"PATH=/nonexistent:" + bin}, Stdout: out}
	res, err := Run(t.Context(), c)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if got := string(out.Bytes()); got != "from mytool\n" {
		t.Errorf("output = %q", got)
	}
}

func TestRunNotFound(t *testing.T) {
	empty := t.TempDir()
	workdir := t.TempDir()
	writeScript(t, filepath.Join(workdir), "planted", "true\n")
	nonExec := filepath.Join(empty, "data")
	if err := os.WriteFile(nonExec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		argv string
		env  []string
		want string
	}{
		// `true` is on the test process's PATH, but not on the child's.
		{"parent PATH not used", "true", []string{"PATH=" + empty}, "`true` not found in PATH (" + empty + ")"},
		{"no PATH", "claude", nil, "`claude` not found in PATH (PATH is empty)"},
		{"last PATH wins", "true", []string{"PATH=" + HostEnv()["PATH"], "PATH=" + empty}, "`true` not found in PATH"},
		// A relative PATH entry would resolve inside the worktree.
		{"relative PATH entry skipped", "planted", []string{"PATH=."}, "`planted` not found in PATH (.)"},
		{"directory", filepath.Base(empty), []string{"PATH=" + filepath.Dir(empty)}, "not found in PATH"},
		{"not executable", "data", []string{"PATH=" + empty}, "`data` not found in PATH"},
		{"slash name", "./missing", nil, "`./missing` not found or not executable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(t.Context(), Cmd{Argv: []string{tt.argv}, Dir: workdir, Env: tt.env})
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
			var nf *NotFoundError
			if !errors.As(err, &nf) || nf.Name != tt.argv {
				t.Errorf("err = %#v, want a *NotFoundError for %q", err, tt.argv)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
			if res.ExitCode != -1 {
				t.Errorf("ExitCode = %d, want -1", res.ExitCode)
			}
		})
	}
}

// A name with a slash is taken relative to Cmd.Dir, as the child sees it.
func TestRunRelativeProgram(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "build.sh", "exit 4\n")
	res, err := Run(t.Context(), Cmd{Argv: []string{"./build.sh"}, Dir: dir})
	if err != nil || res.ExitCode != 4 {
		t.Errorf("Run = %+v, %v; want exit 4", res, err)
	}
}

func TestLookPath(t *testing.T) {
	bin := t.TempDir()
	want := writeScript(t, bin, "tool", "true\n")
	got, err := LookPath([]string{"PATH=" + t.TempDir() + ":" + bin}, "tool")
	if err != nil || got != want {
		t.Errorf("LookPath = %q, %v; want %q", got, err, want)
	}
}
