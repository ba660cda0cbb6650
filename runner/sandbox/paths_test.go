package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// What the cache learnt about a path holds for its TTL, then is looked up
// again.
func TestPathCache(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	target := filepath.Join(dir, "target")
	for _, tt := range []struct {
		name string
		ttl  time.Duration
		want []pathInfo // after: nothing there, a link to a dir, the dir gone
	}{
		{"within the TTL", time.Hour, []pathInfo{{canon: link}, {canon: link}, {canon: link}}},
		{"TTL passed", time.Nanosecond, []pathInfo{{canon: link}, {canon: target, exists: true}, {canon: link}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(link)
			os.Remove(target)
			c := newPathCache(tt.ttl)
			var got []pathInfo
			for _, step := range []func(){
				func() {},
				func() { os.Mkdir(target, 0o755); os.Symlink("target", link) },
				func() { os.Remove(link); os.Remove(target) },
			} {
				step()
				info := c.resolve(link)
				info.at = time.Time{}
				got = append(got, info)
			}
			if diff := cmp.Diff(got, tt.want, cmp.AllowUnexported(pathInfo{})); diff != "" {
				t.Errorf("resolve (-got +want):\n%s", diff)
			}
		})
	}
}

// A directory a jail shows that vanishes while the Sandbox still believes
// in it is left out of the next start, which runs.
func TestJailStartsWhenACachedDirVanished(t *testing.T) {
	s := newTestSandbox(t, Config{})
	tools := filepath.Join(t.TempDir(), "tools")
	os.Mkdir(tools, 0o755)
	j := &Jail{Sandbox: s, Workspace: t.TempDir(), ReadOnly: []string{tools}}
	script := `[ -d ` + tools + ` ] && echo SHOWN || echo ABSENT`
	if _, out := jailRun(t, context.Background(), j, script); strings.TrimSpace(out) != "SHOWN" {
		t.Fatalf("first start: %q, want SHOWN", out)
	}
	os.Remove(tools)
	if res, out := jailRun(t, context.Background(), j, script); res.ExitCode != 0 || strings.TrimSpace(out) != "ABSENT" {
		t.Errorf("after the directory vanished: exit %d, %q; want exit 0, ABSENT", res.ExitCode, out)
	}
}
