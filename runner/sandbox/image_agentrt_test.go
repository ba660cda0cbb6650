package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// A Bind shows a host directory read-only at a fixed path of an image
// jail, and a program there runs by that path (the bot's agent runtime);
// a name in a Bind that its directory lacks is not found.
func TestImageJailBinds(t *testing.T) {
	s, _ := imageSandbox(t, nil)
	src := t.TempDir()
	writeScript(t, src, "prog", `echo "ran from $0"; cat /kilroy/test-bind/data; touch /kilroy/test-bind/new 2>/dev/null && echo writable || echo read-only`+"\n")
	if err := os.WriteFile(filepath.Join(src, "data"), []byte("BOUND\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j := NodeJail(s, HostEnv(), t.TempDir(), "", "", "")
	j.Binds = []Bind{{Src: src, Dst: "/kilroy/test-bind"}}
	env := NodeEnv(EnvSpec{Image: s.ImageEnv()})
	res, out := runOut(t, Cmd{Argv: []string{"/kilroy/test-bind/prog"}, Dir: j.Workspace, Env: env, Jail: j})
	if want := "ran from /kilroy/test-bind/prog\nBOUND\nread-only\n"; res.ExitCode != 0 || out != want {
		t.Errorf("exit %d, output %q, want %q", res.ExitCode, out, want)
	}
	if _, err := os.Stat(filepath.Join(src, "new")); err == nil {
		t.Error("the jail wrote into the bound directory")
	}
	_, err := Run(context.Background(), Cmd{Argv: []string{"/kilroy/test-bind/missing"}, Dir: j.Workspace, Env: env, Jail: j,
		Stdout: &strings.Builder{}, Stderr: &strings.Builder{}})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("a program the bound directory lacks: %v, want ErrNotFound", err)
	}
}

// ImageRuns takes a program the image has, and refuses one it lacks and
// a script of the image's whose interpreter the image lacks (an npm CLI
// in an image without node), saying so.
func TestImageRuns(t *testing.T) {
	s, _ := imageSandbox(t, func(root string) {
		imagetest.WriteFile(t, root, "usr/local/bin/npm-cli", "#!/usr/bin/env node\n", 0o755)
		imagetest.WriteFile(t, root, "usr/local/bin/sh-cli", "#!/bin/sh\necho\n", 0o755)
	})
	j := NodeJail(s, HostEnv(), t.TempDir(), "", "", "")
	env := append(NodeEnv(EnvSpec{Image: s.ImageEnv()}), "PATH=/usr/local/bin:/usr/bin:/bin")
	for _, tc := range []struct{ name, want string }{
		{name: "cat"},
		{name: "sh-cli"},
		{name: "npm-cli", want: "its interpreter `node` is not in the image"},
		{name: "no-such-cli", want: "`no-such-cli` not found in image test-image"},
	} {
		err := j.ImageRuns(env, j.Workspace, tc.name)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ImageRuns(%s) = %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := (*Jail)(nil).ImageRuns(env, "", "no-such-cli"); err != nil {
		t.Errorf("ImageRuns without a jail = %v, want nil", err)
	}
}
