package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What a spare can carry: its stdin is /dev/null and its output two pipes
// of its own; the shell that runs its command drops or resets some
// variables; bwrap's options are NUL-separated; the command travels in one
// environment string. Anything else starts cold.
func TestSpareFits(t *testing.T) {
	dir := t.TempDir()
	shared := &bytes.Buffer{}
	for _, tt := range []struct {
		name  string
		edit  func(c *Cmd, s *Sandbox)
		spare bool
	}{
		{"plain", func(c *Cmd, s *Sandbox) {}, true},
		{"no writers", func(c *Cmd, s *Sandbox) { c.Stdout, c.Stderr = nil, nil }, true},
		{"working directory", func(c *Cmd, s *Sandbox) { c.Dir = dir }, true},
		{"quotes and newlines", func(c *Cmd, s *Sandbox) { c.Argv = append(c.Argv, "it's", "a\nb", "") }, true},
		{"PWD and OLDPWD", func(c *Cmd, s *Sandbox) { c.Env = append(c.Env, "PWD=/x", "OLDPWD=/y") }, true},
		{"no dash", func(c *Cmd, s *Sandbox) { s.spareShell = false }, false},
		{"stdin", func(c *Cmd, s *Sandbox) { c.Stdin = strings.NewReader("x") }, false},
		{"one writer for both", func(c *Cmd, s *Sandbox) { c.Stdout, c.Stderr = shared, shared }, false},
		{"a file for stdout", func(c *Cmd, s *Sandbox) { c.Stdout = os.Stderr }, false},
		{"missing directory", func(c *Cmd, s *Sandbox) { c.Dir = dir + "/missing" }, false},
		{"IFS", func(c *Cmd, s *Sandbox) { c.Env = append(c.Env, "IFS=:") }, false},
		{"OPTIND", func(c *Cmd, s *Sandbox) { c.Env = append(c.Env, "OPTIND=2") }, false},
		{"PPID", func(c *Cmd, s *Sandbox) { c.Env = append(c.Env, "PPID=1") }, false},
		{"the command variable", func(c *Cmd, s *Sandbox) { c.Env = append(c.Env, spareVar+"=x") }, false},
		{"a name the shell drops", func(c *Cmd, s *Sandbox) { c.Env = append(c.Env, "a-b=1") }, false},
		{"a name with a leading digit", func(c *Cmd, s *Sandbox) { c.Env = append(c.Env, "1A=1") }, false},
		{"no equals sign", func(c *Cmd, s *Sandbox) { c.Env = append(c.Env, "NAME") }, false},
		{"NUL in a value", func(c *Cmd, s *Sandbox) { c.Env = append(c.Env, "A=x\x00y") }, false},
		{"NUL in an argument", func(c *Cmd, s *Sandbox) { c.Argv = append(c.Argv, "x\x00y") }, false},
		{"a huge argument", func(c *Cmd, s *Sandbox) { c.Argv = append(c.Argv, strings.Repeat("x", maxSpareScript)) }, false},
		{"too many variables", func(c *Cmd, s *Sandbox) {
			for i := range maxSpareOptions / 3 {
				c.Env = append(c.Env, "V"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+"="+strings.Repeat("y", i))
			}
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &Sandbox{spareShell: true}
			c := Cmd{Argv: []string{"/bin/true"}, Env: []string{"PATH=/usr/bin", "A=1"}, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
			tt.edit(&c, s)
			if _, got := s.spareOptions(c, c.Argv, []string{"--unshare-pid"}); got != tt.spare {
				t.Errorf("fits a spare: %v, want %v", got, tt.spare)
			}
		})
	}
}

// Spares need dash at /bin/sh in the jail: where the operator hides it,
// jailed Runs start cold, and work (a program other than the shell).
func TestSpareNeedsAVisibleShell(t *testing.T) {
	real := canonical(spareShell)
	if filepath.Base(real) != "dash" {
		t.Skipf("%s is %s, not dash", spareShell, real)
	}
	for _, tt := range []struct {
		hidden []string
		want   bool
	}{
		{nil, true},
		{[]string{"/opt/secret"}, true},
		{[]string{real}, false},
		{[]string{filepath.Dir(real)}, false},
		{[]string{spareShell}, false},
	} {
		if got := spareShellVisible(tt.hidden); got != tt.want {
			t.Errorf("spareShellVisible(%q) = %v, want %v", tt.hidden, got, tt.want)
		}
	}
	newTestSandbox(t, Config{}) // skips where bubblewrap cannot work
	// Not newTestSandbox: its self-test runs /bin/sh.
	s, err := New(Config{PATH: HostEnv()["PATH"], StateDir: t.TempDir(), Hidden: []string{real}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ws := t.TempDir()
	for range 2 { // the first Run would start cold anyway
		warm(t, s)
		res, out := runOut(t, Cmd{Argv: []string{"echo", "cold"}, Dir: ws, Env: jailEnv(), Jail: &Jail{Sandbox: s, Workspace: ws}})
		if res.ExitCode != 0 || res.spare || out != "cold\n" {
			t.Errorf("dash hidden: exit %d, from a spare %v, output %q; want a cold start that works", res.ExitCode, res.spare, out)
		}
	}
}
