package main

import (
	"regexp"
	"strings"
	"testing"
)

// goFlagDump matches what flag.PrintDefaults writes: "  -name" lines.
var goFlagDump = regexp.MustCompile(`(?m)^  -[a-z]|Usage of`)

// Every command answers -h and --help the same way: its usage on stdout,
// exit 0, nothing on stderr, and no Go flag dump ("-flag value" lines).
// A bad flag is a usage error on stderr with the same usage.
func TestHelpConsistent(t *testing.T) {
	for _, cmd := range []string{"init", "validate", "run", "resume", "gc", "serve", "setup", "healthcheck", "version"} {
		for _, h := range []string{"-h", "--help"} {
			t.Run(cmd+" "+h, func(t *testing.T) {
				code, stdout, stderr := runCmd(cmd, h)
				if code != 0 || stderr != "" {
					t.Errorf("exit %d, stderr %q; want 0 and nothing", code, stderr)
				}
				if !strings.HasPrefix(stdout, "usage: kilroy-bot "+cmd) {
					t.Errorf("stdout does not start with the usage of %s:\n%s", cmd, stdout)
				}
				if goFlagDump.MatchString(stdout) {
					t.Errorf("stdout has Go's flag dump:\n%s", stdout)
				}
			})
		}
		if cmd == "version" {
			continue
		}
		t.Run(cmd+" bad flag", func(t *testing.T) {
			code, stdout, stderr := runCmd(cmd, "--bogus")
			if code != 2 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, stdout)
			}
			if !strings.Contains(stderr, "flag provided but not defined: -bogus") || !strings.Contains(stderr, "kilroy-bot "+cmd) {
				t.Errorf("stderr does not name the flag and the command:\n%s", stderr)
			}
		})
	}
}
