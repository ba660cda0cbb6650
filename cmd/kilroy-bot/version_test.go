package main

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuildInfoFrom(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	tests := []struct {
		name      string
		in        debug.BuildInfo
		want      buildInfo
		wantLine  string
		wantLabel string // kilroy_build_info's revision label
	}{
		{
			name:      "go install at a tag",
			in:        debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.0"}},
			want:      buildInfo{Version: "v1.2.0", GoVersion: "go1.26.0"},
			wantLine:  "kilroy-bot v1.2.0 go1.26.0",
			wantLabel: "",
		},
		{
			name: "checkout with changes",
			in: debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs(
				"vcs", "git", "vcs.revision", "0123456789abcdef0123", "vcs.time", "2025-01-02T03:04:05Z", "vcs.modified", "true")},
			want: buildInfo{Version: "(devel)", Revision: "0123456789abcdef0123", Time: "2025-01-02T03:04:05Z",
				Modified: true, GoVersion: "go1.26.0"},
			wantLine:  "kilroy-bot (devel) (revision 0123456789ab, 2025-01-02T03:04:05Z, modified) go1.26.0",
			wantLabel: "0123456789abcdef0123-modified",
		},
		{
			name:      "clean checkout",
			in:        debug.BuildInfo{GoVersion: "go1.26.0", Settings: vcs("vcs.revision", "abc", "vcs.modified", "false")},
			want:      buildInfo{Version: "(devel)", Revision: "abc", GoVersion: "go1.26.0"},
			wantLine:  "kilroy-bot (devel) (revision abc) go1.26.0",
			wantLabel: "abc",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buildInfoFrom(&tt.in)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("buildInfoFrom (-got +want):\n%s", diff)
			}
			if line := got.String(); line != tt.wantLine {
				t.Errorf("String() = %q, want %q", line, tt.wantLine)
			}
			if m := got.metrics(); m.Revision != tt.wantLabel || m.Version != tt.want.Version || m.GoVersion != "go1.26.0" {
				t.Errorf("metrics() = %+v, want revision %q", m, tt.wantLabel)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		t.Run(args[0], func(t *testing.T) {
			code, stdout, stderr := runCmd(args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
			}
			if !strings.HasPrefix(stdout, "kilroy-bot ") || !strings.HasSuffix(stdout, " "+runtime.Version()+"\n") {
				t.Errorf("stdout %q, want kilroy-bot VERSION ... %s", stdout, runtime.Version())
			}
		})
	}
	if code, _, stderr := runCmd("version", "extra"); code != 2 || !strings.Contains(stderr, `unexpected argument "extra"`) {
		t.Errorf("version extra: exit %d, stderr %q; want 2 naming the argument", code, stderr)
	}
}

// The start line says which build is starting.
func TestServeStartLineHasVersion(t *testing.T) {
	var logs bytes.Buffer
	b := buildInfo{Version: "v9.8.7", Revision: "0123456789abcdef", GoVersion: "go1.26.0"}
	logStart(context.Background(), newTestLogger(&logs), b, serveConfig{Listen: ":8080"}, "127.0.0.1:8080")
	var line map[string]any
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("start line %q: %v", logs.String(), err)
	}
	got := map[string]any{"msg": line["msg"], "version": line["version"], "revision": line["revision"], "addr": line["addr"]}
	want := map[string]any{"msg": "serve: starting", "version": "v9.8.7", "revision": "0123456789ab", "addr": "127.0.0.1:8080"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("start line (-got +want):\n%s", diff)
	}
}
