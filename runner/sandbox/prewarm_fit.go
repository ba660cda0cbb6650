package sandbox

import (
	"io"
	"os"
	"slices"
)

// prewarmKey is what a Run shares with the jail prewarmed for it: the
// bwrap options (the mounts, with the numbers of their descriptors, and
// the working directory), the host paths the binds show (srcs: the
// options name only the jail's fixed paths), the command, the environment
// and the run; false when c cannot take a prewarmed jail: its stdin is
// /dev/null, and a missing working directory gets the cold path's error.
func prewarmKey(c Cmd, argv, opts, srcs []string) ([]string, bool) {
	if c.Stdin != nil || !isDirOrEmpty(c.Dir) {
		return nil, false
	}
	key := slices.Concat(opts, []string{"--"}, argv, []string{"\x00env"}, c.Env, []string{"\x00src"}, srcs)
	if c.Jail != nil {
		// The run's network namespace (network public), which the
		// options do not name.
		key = append(key, "\x00run", c.Jail.Run)
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
