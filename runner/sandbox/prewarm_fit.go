package sandbox

import (
	"fmt"
	"io"
	"os"
	"slices"
)

// prewarmKey is what a Run shares with the jail prewarmed for it: what
// its plan was made from (the command as given, the environment, the
// working directory and every field of the jail, the Sandbox by
// identity); false when c cannot take a prewarmed jail: its stdin is not
// /dev/null. A Run whose key matches adopts the jail without planning its
// own: the jail shows what the plan found when Prewarm was called (see
// prewarm.go).
func prewarmKey(c Cmd) ([]string, bool) {
	if c.Stdin != nil || c.Jail == nil {
		return nil, false
	}
	j := c.Jail
	key := slices.Concat(c.Argv, []string{"\x00env"}, c.Env, []string{"\x00dir", c.Dir,
		"\x00jail", fmt.Sprintf("%p", j.Sandbox), j.Workspace, j.Stage, j.ManagedRoots, j.Caches, j.Run, "\x00ro"}, j.ReadOnly)
	key = append(key, "\x00binds")
	for _, b := range j.Binds {
		key = append(key, b.Src, b.Dst)
	}
	return key, true
}

// pipedOutputs reports whether a prewarmed jail's two pipes can carry
// stdout and stderr: not for one writer shared by both (the order of their
// lines would be lost) nor for a file the process should write itself.
func pipedOutputs(stdout, stderr io.Writer) bool {
	_, outFile := stdout.(*os.File)
	_, errFile := stderr.(*os.File)
	return !outFile && !errFile && !sameWriter(stdout, stderr)
}

// isDirOrEmpty: a missing working directory gets the cold path's error.
func isDirOrEmpty(dir string) bool {
	if dir == "" {
		return true
	}
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}
