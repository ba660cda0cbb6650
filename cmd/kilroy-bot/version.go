package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/metrics"
)

// buildInfo is what the binary knows about how it was built: the module
// version `go install …@vX` stamps (a pseudo-version or "(devel)" for a
// build from a checkout) and the commit the go command read from git.
type buildInfo struct {
	Version   string
	Revision  string // full commit hash, "" when unknown
	Time      string // commit time, RFC 3339
	Modified  bool   // the checkout had uncommitted changes
	GoVersion string
}

// currentBuild reads the build information linked into the binary.
func currentBuild() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildInfo{Version: "unknown", GoVersion: runtime.Version()}
	}
	return buildInfoFrom(bi)
}

func buildInfoFrom(bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if b.Version == "" {
		b.Version = "(devel)" // a test binary, or a build outside module mode
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one line `kilroy-bot version` prints, such as
// "kilroy-bot v1.2.0 (revision 0123456789ab, 2025-01-02T03:04:05Z, modified) go1.26.0".
func (b buildInfo) String() string {
	var details []string
	if b.Revision != "" {
		details = append(details, "revision "+short(b.Revision))
	}
	if b.Time != "" {
		details = append(details, b.Time)
	}
	if b.Modified {
		details = append(details, "modified")
	}
	s := "kilroy-bot " + b.Version
	if len(details) > 0 {
		s += " (" + strings.Join(details, ", ") + ")"
	}
	return s + " " + b.GoVersion
}

// metrics gives the kilroy_build_info labels.
func (b buildInfo) metrics() metrics.BuildInfo {
	rev := b.Revision
	if b.Modified && rev != "" {
		rev += "-modified"
	}
	return metrics.BuildInfo{Version: b.Version, Revision: rev, GoVersion: b.GoVersion}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// runVersion implements `kilroy-bot version` and `--version`.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
			fmt.Fprintln(stdout, "usage: kilroy-bot version\n\nPrints the version, the commit it was built from and the Go version.")
			return 0
		}
		fmt.Fprintf(stderr, "kilroy-bot version: unexpected argument %q\n", args[0])
		return 2
	}
	fmt.Fprintln(stdout, currentBuild())
	return 0
}
