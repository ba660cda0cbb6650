package gitops

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// loggingGit writes a git wrapper that appends its argv and environment to
// files and then runs the real git.
func loggingGit(t *testing.T) (wrapper, argvLog, envLog string) {
	t.Helper()
	dir := t.TempDir()
	argvLog, envLog = filepath.Join(dir, "argv.log"), filepath.Join(dir, "env.log")
	wrapper = filepath.Join(dir, "git")
	script := "#!/bin/sh\n" +
		"printf '%s\\n' \"$*\" >> '" + argvLog + "'\n" +
		"env >> '" + envLog + "'\n" +
		"exec '" + realGitPath(t) + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper, argvLog, envLog
}

// authRecorder is an HTTP remote that records Authorization headers and
// refuses everything, echoing the credential it got back in the body (git
// prints that as "remote: ..."), like a careless host would.
type authRecorder struct {
	mu    sync.Mutex
	auths []string
}

func (a *authRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.auths = append(a.auths, r.Header.Get("Authorization"))
	a.mu.Unlock()
	user, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(r.Header.Get("Authorization"), "Basic "))
	http.Error(w, "denied "+r.Header.Get("Authorization")+" "+string(user), http.StatusForbidden)
}

func TestTokenOnlyTravelsInAnInheritedDescriptor(t *testing.T) {
	ctx := context.Background()
	const token = "ghs_S3cretInstallationToken"
	cred := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	wrapper, argvLog, envLog := loggingGit(t)
	var calls int
	g := newTestGit(t, func(o *Options) {
		o.GitPath = wrapper
		o.TokenSource = func(context.Context) (string, error) { calls++; return token, nil }
	})
	rec := &authRecorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()

	mirror := filepath.Join(t.TempDir(), "mirror.git")
	url := srv.URL + "/o/r.git"
	if err := g.EnsureMirror(ctx, mirror, url); err != nil {
		t.Fatal(err)
	}
	fetchErr := g.Fetch(ctx, mirror, url)
	if fetchErr == nil {
		t.Fatal("fetch from a refusing server: no error")
	}
	repo := newRepo(t, g, map[string]string{"a.txt": "a\n"})
	wt, branch, _ := newRun(t, g, repo)
	pushErr := g.Push(ctx, wt, url, branch)
	if pushErr == nil {
		t.Fatal("push to a refusing server: no error")
	}

	if calls != 2 {
		t.Errorf("TokenSource called %d times, want once per fetch and push (2)", calls)
	}
	rec.mu.Lock()
	auths := append([]string(nil), rec.auths...)
	rec.mu.Unlock()
	if len(auths) == 0 {
		t.Fatal("the server saw no request")
	}
	for _, a := range auths {
		if a != "Basic "+cred {
			t.Errorf("server saw Authorization %q, want Basic x-access-token", a)
		}
	}
	for name, text := range map[string]string{
		"fetch error":   fetchErr.Error(),
		"push error":    pushErr.Error(),
		"argv log":      readFile(t, argvLog),
		"env log":       readFile(t, envLog),
		"mirror config": readFile(t, filepath.Join(mirror, "config")),
		"repo config":   readFile(t, filepath.Join(repo, ".git", "config")),
	} {
		if containsAny(text, token, cred) {
			t.Errorf("%s contains the token:\n%s", name, text)
		}
	}
	for _, err := range []error{fetchErr, pushErr} {
		if !strings.Contains(err.Error(), "remote: denied Basic [REDACTED] x-access-token:[REDACTED]") {
			t.Errorf("error %q: want the echoed credential redacted", err)
		}
	}
	env := readFile(t, envLog)
	if !strings.Contains(readFile(t, argvLog), "-c include.path=/dev/fd/3") {
		t.Error("git was not pointed at the descriptor holding its credentials")
	}
	if left, _ := filepath.Glob(filepath.Join(g.home, ".auth-*")); len(left) > 0 {
		t.Errorf("credential files left on disk: %v", left)
	}
	for _, want := range []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "HOME=" + g.home, "LC_ALL=C"} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("git's environment lacks %s", want)
		}
	}
}

func TestCredentialsInURLRefused(t *testing.T) {
	g := newTestGit(t)
	err := g.EnsureMirror(context.Background(), filepath.Join(t.TempDir(), "m"), "https://x-access-token:tok@example.com/o/r.git")
	if err == nil || strings.Contains(err.Error(), "tok@") {
		t.Errorf("EnsureMirror with credentials in the URL = %v, want a refusal that does not echo them", err)
	}
}
