package sandbox

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// A spare's command is fixed when it is made, before anyone knows what it
// will run: bwrap reads only options from its --args descriptor. The
// command is a shell that runs what spareVar, set among the options, says:
// the node's argv, quoted, behind an exec. Nothing of the bot's
// environment reaches that bwrap (it starts with none); the node's comes
// as --setenv options.
const (
	spareVar   = "KILROY_SPARE_EXEC"
	spareShell = "/bin/sh"
)

// spareArgv is the command line of a spare bwrap: options from fd 5, then
// the shell.
func spareArgv(bwrap string) []string {
	return []string{bwrap, "--args", "5", "--", spareShell, "-c", `eval "$` + spareVar + `"`}
}

// shellOwned are the variables dash sets or resets itself on start, so a
// node would not see the value it was given; spareVar is the shell's own.
// A node with any of them starts cold. (PWD is bwrap's: it sets the jail's
// working directory there, which dash keeps.)
var shellOwned = map[string]bool{"OPTIND": true, "PPID": true, "IFS": true, spareVar: true}

// Bounds of a spare's options: bwrap takes at most 9000 arguments, and
// Linux at most 128 KiB in one environment string (spareVar's).
const (
	maxSpareOptions = 8000
	maxSpareScript  = 120 << 10
)

// spareOptions returns what a spare reads on its --args descriptor to run
// argv in a jail with options opts (Jail.options): opts, the node's
// environment, the handshake, and spareVar; false when c does not fit a
// spare and takes the cold path. A spare has stdin /dev/null, and stdout
// and stderr pipes of its own to the caller's writers; the shell drops
// variables whose names are no shell names and resets shellOwned ones.
func (s *Sandbox) spareOptions(c Cmd, argv, opts []string) ([]string, bool) {
	if c.Stdin != nil || !spareOutputs(c.Stdout, c.Stderr) {
		return nil, false
	}
	return s.spareArgs(c, argv, opts)
}

// spareArgs is spareOptions without the checks on c's input and output
// (Prewarm has no writers yet; the Run that adopts its jail is checked).
func (s *Sandbox) spareArgs(c Cmd, argv, opts []string) ([]string, bool) {
	if !s.spareShell || !isDirOrEmpty(c.Dir) {
		return nil, false
	}
	out := make([]string, 0, len(opts)+3*len(c.Env)+len(handshakeArgs)+3)
	out = append(out, opts...)
	for _, kv := range c.Env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !shellName(name) || shellOwned[name] {
			return nil, false
		}
		out = append(out, "--setenv", name, value)
	}
	out = append(out, handshakeArgs...)
	script := execScript(argv)
	if len(script) > maxSpareScript {
		return nil, false
	}
	// spareVar comes last: options cut short (a bot that died writing
	// them) leave it unset or its script unterminated, and run nothing.
	out = append(out, "--setenv", spareVar, script)
	if len(out) > maxSpareOptions {
		return nil, false
	}
	for _, o := range out {
		if strings.IndexByte(o, 0) >= 0 {
			return nil, false // bwrap's options are NUL-separated; exec refuses NUL anyway
		}
	}
	return out, true
}

// execScript is the shell script that replaces the shell with argv. The
// braces make a cut-short script a syntax error rather than a shorter
// command.
func execScript(argv []string) string {
	var b strings.Builder
	b.WriteString("{ unset " + spareVar + "; exec")
	for _, a := range argv {
		b.WriteString(" '")
		b.WriteString(strings.ReplaceAll(a, "'", `'\''`))
		b.WriteString("'")
	}
	b.WriteString("; }")
	return b.String()
}

// spareOutputs reports whether a spare's two pipes can carry stdout and
// stderr: not for one writer shared by both (the order of their lines
// would be lost) nor for a file the process should write itself.
func spareOutputs(stdout, stderr io.Writer) bool {
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

// shellName reports whether name is a name the shell keeps in the
// environment it passes on.
func shellName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

// spareShellVisible reports whether the spare's shell is dash and nodes
// see it, the hidden paths notwithstanding. Other shells change more of
// the environment they pass on (bash sets _ and SHLVL).
func spareShellVisible(hidden []string) bool {
	real := canonical(spareShell)
	if !executable(real) || filepath.Base(real) != "dash" {
		return false
	}
	for _, h := range hidden {
		if within(spareShell, h) || within(real, h) {
			return false
		}
	}
	return true
}
