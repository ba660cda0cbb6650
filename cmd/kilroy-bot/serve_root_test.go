package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// serve as root (issue 23, item 9) does not start unless told to, saying
// why and how; told to (--allow-root or KILROY_ALLOW_ROOT), every summary's
// banner says so. As a user it starts as before and says nothing.
func TestServeRefusesRootUnlessAllowed(t *testing.T) {
	f := writeServeFiles(t)
	env := map[string]string{
		"KILROY_LISTEN": "127.0.0.1:0", "KILROY_DATA_DIR": t.TempDir(), "KILROY_APP_ID": "7",
		"KILROY_PRIVATE_KEY_FILE": f.key, "KILROY_WEBHOOK_SECRET_FILE": f.secret,
	}
	defer func(g func() int) { geteuid = g }(geteuid)

	geteuid = func() int { return 0 }
	var stdout, stderr bytes.Buffer
	if code := runServe(context.Background(), nil, envOf(env), &stdout, &stderr); code != 2 {
		t.Fatalf("serve as root: exit %d, want 2; stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{"runs as root", "--allow-root", "KILROY_ALLOW_ROOT=1", "unprivileged user"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("serve as root says:\n%s\nwant %q in it", stderr.String(), want)
		}
	}

	for _, how := range []struct {
		args []string
		env  string
	}{{[]string{"--allow-root"}, ""}, {nil, "1"}} {
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		if how.env != "" {
			e["KILROY_ALLOW_ROOT"] = how.env
		}
		cfg, err := loadServeConfig(how.args, envOf(e))
		if err != nil {
			t.Fatal(err)
		}
		if !cfg.Root || !cfg.AllowRoot || !strings.Contains(insecureBanner(cfg), "runs as root") {
			t.Errorf("%v %q: root %v, allowed %v, banner %q", how.args, how.env, cfg.Root, cfg.AllowRoot, insecureBanner(cfg))
		}
	}

	geteuid = func() int { return 10001 }
	cfg, err := loadServeConfig([]string{"--allow-root"}, envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Root || insecureBanner(cfg) != "" {
		t.Errorf("as a user with --allow-root: root %v, banner %q; want neither", cfg.Root, insecureBanner(cfg))
	}
	if b := insecureBanner(serveConfig{Root: true, AllowRoot: true, InsecureNoSandbox: true}); !strings.Contains(b, "without a sandbox") || !strings.Contains(b, "runs as root") || strings.Count(b, "[!WARNING]") != 1 {
		t.Errorf("both warnings in one banner: %q", b)
	}
}

// Through serve and the fake GitHub: a server allowed to run as root says
// so first in every check's summary, the summary and the node checks.
func TestServeE2EAllowRootBanner(t *testing.T) {
	e := newE2E(t, e2eOptions{deferStart: true})
	e.cfg.Root, e.cfg.AllowRoot = true, true
	e.start()
	sha := e.repo.Commit(t, "feature-8", map[string]string{"README.md": "change\n"}, "change")
	e.deliver("pull_request", e.openPR("opened", pr{number: 8, sha: sha}))
	runs := e.waitSettled(sha, "kilroy/ci")
	all := e.gh.CheckRuns(e2eOwner, e2eName)
	if len(runs) == 0 || len(all) < 2 {
		t.Fatalf("want the summary and node checks, got %d", len(all))
	}
	for _, c := range all {
		if c.HeadSHA == sha && !strings.HasPrefix(c.Summary, "> [!WARNING]\n> **This server runs as root**") {
			t.Errorf("check %s's summary does not start with the root warning:\n%s", c.Name, c.Summary)
		}
	}
}
