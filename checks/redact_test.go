package checks

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/findings"
)

// Token-shaped test values are assembled at run time so that secret
// scanners do not mistake this file for a leak.
const (
	alnum36 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	jwt     = "eyJ" + "hbGciOiJSUzI1NiJ9" + ".eyJ" + "pc3MiOiIxMjM0NSJ9" + ".c2lnbmF0dXJl-_x"
	pemKey  = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4Zs\nq2Rm0WbT/9vXk+3pZ\n-----END RSA " + "PRIVATE KEY-----"
)

func TestRedactTokenShapes(t *testing.T) {
	for _, tc := range []struct{ name, secret string }{
		{"installation token", "gh" + "s_" + alnum36},
		{"personal token", "gh" + "p_" + alnum36},
		{"oauth token", "gh" + "o_" + alnum36},
		{"user-to-server token", "gh" + "u_" + alnum36},
		{"refresh token", "gh" + "r_" + alnum36},
		{"fine-grained PAT", "github" + "_pat_11ABCDEFG0_" + alnum36 + alnum36},
		{"anthropic key", "sk-" + "ant-api03-" + alnum36 + "-_AA"},
		{"openai key", "sk-" + "proj-" + alnum36},
		{"openai legacy key", "sk-" + alnum36 + "T3BlbkFJ"},
		{"aws access key", "AK" + "IAIOSFODNN7EXAMPLE"},
		{"jwt", jwt},
		{"private key", pemKey},
		{"cut-off private key", "-----BEGIN " + "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := "before " + tc.secret + " after"
			got := NewRedactor().Redact(in)
			if strings.Contains(got, tc.secret) || !strings.Contains(got, Redacted) {
				t.Errorf("Redact(%q) = %q", in, got)
			}
			if !strings.HasPrefix(got, "before "+Redacted) {
				t.Errorf("Redact(%q) = %q: the text around the secret changed", in, got)
			}
			// A nil Redactor still removes shapes.
			var r *Redactor
			if strings.Contains(r.Redact(in), tc.secret) {
				t.Error("nil Redactor leaked a token shape")
			}
		})
	}
}

func TestRedactLeavesOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"task-abcdefghijklmnopqrstuvwxyz0123",  // "sk-" inside a word
		"sk-short",                             // too short for a key
		"ghp_tooShort",                         // too short for a token
		"AKIAlowercase0000000",                 // not an access key ID
		"eyJhbGciOiJIUzI1NiJ9 without payload", // one segment is no JWT
		"-----BEGIN PUBLIC KEY-----",
		"go vet ./... exited with status 1",
	} {
		if got := NewRedactor("password", "hunter22hunter").Redact(s); got != s {
			t.Errorf("Redact(%q) = %q", s, got)
		}
	}
}

func TestRedactExactValues(t *testing.T) {
	r := NewRedactor("webhook-secret-value\n", "short", "", "longer-secret-with-webhook-secret-value-inside", pemKey)
	for _, tc := range []struct{ in, want string }{
		{"sig=webhook-secret-value;", "sig=[REDACTED];"},
		{"x longer-secret-with-webhook-secret-value-inside y", "x [REDACTED] y"},
		{"a short word", "a short word"}, // under MinSecretLen: not a secret
		// A PEM key quoted line by line is still redacted line by line.
		{"  MIIEowIBAAKCAQEAx4Zs\n", "  [REDACTED]\n"},
	} {
		if got := r.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRenderedOutputIsRedacted puts secrets everywhere a run can carry
// text and checks that no rendered string contains one.
func TestRenderedOutputIsRedacted(t *testing.T) {
	const secret = "s3cr3t-webhook-value"
	ghs := "gh" + "s_" + alnum36
	s := newScript(t, ciDOT, RunInfo{Pipeline: "ci", RunID: "r1", HeadSHA: sha(1)})
	o := vetFailed()
	o.FailureReason = "token " + ghs + " rejected; secret " + secret
	o.Findings = append(o.Findings, findings.Finding{Path: "a.go", Line: 1, Level: findings.LevelError, Message: "leaked " + secret + " and " + jwt, Tool: findings.ToolGo})
	s.pass("start", sha(2), "build", 0).pass("build", sha(3), "vet", 0).start("vet").attempt("vet", true, o, 0)
	v := s.finish(&attractor.RunResult{Status: attractor.StatusFail, FailedNode: "vet", FailureReason: "vet: " + o.FailureReason})

	opts := withTail(githubOpts(), func(string, string) string {
		return "env:\nKILROY_WEBHOOK_SECRET=" + secret + "\nGITHUB_TOKEN=" + ghs + "\n" + pemKey + "\n" + bigLog(100<<10)
	})
	opts.Redactor = NewRedactor(secret)
	title, summary, text := Summary(v, opts)
	rep := VerifyCheck(v, "vet", opts)
	out := []string{title, summary, text, rep.Title, rep.Summary, rep.Text}
	for _, a := range rep.Annotations {
		out = append(out, a.Title, a.Message, a.RawDetails, a.Path)
	}
	for i, o := range out {
		for _, leak := range []string{secret, ghs, jwt, "MIIEowIBAAKCAQEAx4Zs", alnum36[:12]} {
			if strings.Contains(o, leak) {
				t.Errorf("output %d contains %q", i, leak)
			}
		}
	}
	if !strings.Contains(text, "KILROY_WEBHOOK_SECRET="+Redacted) || !strings.Contains(rep.Text, "GITHUB_TOKEN="+Redacted) {
		t.Errorf("the output tail was not shown redacted:\n%s", text[:min(len(text), 400)])
	}
}

// A secret is caught in the forms it takes on the way out: git's Basic
// credential, base64, URL escaping, an Authorization header of any kind.
func TestRedactEncodedForms(t *testing.T) {
	const tok = "ghs_0123456789abcdefghijABCDEFGHIJ"
	const hostSecret = "p@ss/word+with=specials!"
	r := NewRedactor(hostSecret)
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + tok))
	for _, in := range []string{
		"Authorization: Basic " + basic,
		"cred " + basic + " end",
		"authorization: bearer abcdefghijklmnop",
		"url=" + url.QueryEscape(hostSecret),
		"path/" + url.PathEscape(hostSecret),
		"b64 " + base64.StdEncoding.EncodeToString([]byte(hostSecret)),
		"b64url " + base64.URLEncoding.EncodeToString([]byte(hostSecret)),
	} {
		got := r.Redact(in)
		if !strings.Contains(got, Redacted) || strings.Contains(got, basic) ||
			strings.Contains(got, url.QueryEscape(hostSecret)) || strings.Contains(got, "abcdefghijklmnop") {
			t.Errorf("Redact(%q) = %q, want the secret replaced", in, got)
		}
	}
}

// TestRedactPaths: WithPaths replaces each path, the longest first, and
// keeps the secrets of the Redactor it came from.
func TestRedactPaths(t *testing.T) {
	r := NewRedactor("hunter2hunter2").WithPaths("<data dir>", "/srv/kilroy", "/srv/kilroy-real", "/", "")
	got := r.Redact("git add (in /srv/kilroy/runs/1/worktree): exit 128; real /srv/kilroy-real/x; key hunter2hunter2; /etc")
	want := "git add (in <data dir>/runs/1/worktree): exit 128; real <data dir>/x; key " + Redacted + "; /etc"
	if got != want {
		t.Errorf("Redact:\n got %q\nwant %q", got, want)
	}
}
