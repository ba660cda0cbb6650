package image

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A registry behind basic auth: the credentials come from the auth file,
// read at every pull, and no error ever carries them.
func TestBasicAuthFromAuthFile(t *testing.T) {
	const user, pass, wrong = "kilroy", "s3cret-pw-Zq9", "wrong-pw-Xk4"
	reg := newRegistry(t)
	reg.user, reg.pass = user, pass
	ref := reg.push(t, "private:1", imageOf(t, testPlatform, layer(t, file("a", "1"))))
	secrets := []string{pass, wrong, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)),
		base64.StdEncoding.EncodeToString([]byte(user + ":" + wrong))}
	noSecret := func(t *testing.T, err error) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) {
				t.Errorf("the error carries a credential: %v", err)
			}
		}
	}

	t.Run("anonymous", func(t *testing.T) {
		_, err := pull(t, openStore(t, t.TempDir(), Options{}), ref)
		if err == nil || !strings.Contains(err.Error(), "UNAUTHORIZED") {
			t.Fatalf("err = %v, want UNAUTHORIZED", err)
		}
	})
	for _, key := range []string{reg.host, "http://" + reg.host, "http://" + reg.host + "/v2/"} {
		t.Run("key "+key, func(t *testing.T) {
			got, err := pull(t, openStore(t, t.TempDir(), Options{AuthFile: authFile(t, key, user, pass)}), ref)
			if err != nil {
				t.Fatal(err)
			}
			if tree := listTree(t, got.Root); tree != "a = 1" {
				t.Errorf("tree %q", tree)
			}
		})
	}
	t.Run("wrong password, then the file is rotated", func(t *testing.T) {
		path := authFile(t, reg.host, user, wrong)
		s := openStore(t, t.TempDir(), Options{AuthFile: path})
		_, err := pull(t, s, ref)
		if err == nil {
			t.Fatal("pulled with a wrong password")
		}
		noSecret(t, err)
		if err := os.Rename(authFile(t, reg.host, user, pass), path); err != nil {
			t.Fatal(err)
		}
		if _, err := pull(t, s, ref); err != nil {
			t.Errorf("after rotating the auth file: %v", err)
		}
	})
	t.Run("unusable auth files", func(t *testing.T) {
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
		for body, want := range map[string]string{
			`{"auths": {"r": {"auth": "` + auth + `"}}, "credsStore": "desktop"}`:           "credential helpers",
			`{"auths": {"r": {"auth": "` + auth + `"}}, "credHelpers": {"r": "ecr-login"}}`: "credential helpers",
			`{"auths": {"r": {"auth": "` + auth + `", "password": "` + pass + `"`:           "not a docker config.json",
			`{"auths": {"r": {"auth": "` + pass + `"}}}`:                                    "not a docker config.json",
			`{"auths": {"r": {"auth": 12, "password": "` + pass + `"}}}`:                    "not a docker config.json",
			`{"auths": ["` + pass + `"]}`:                                                   "not a docker config.json",
		} {
			path := filepath.Join(t.TempDir(), "config.json")
			os.WriteFile(path, []byte(body), 0o600)
			_, err := Open(t.TempDir(), Options{AuthFile: path})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Open with %s: err = %v, want %q", body, err, want)
				continue
			}
			noSecret(t, err)
		}
	})
}

// Plain HTTP reaches only the registries listed as insecure (and
// loopback): not a name, not a private address, which go-containerregistry
// alone would try over HTTP.
func TestPlainHTTPOnlyForInsecureRegistries(t *testing.T) {
	reg := newRegistry(t)
	reg.push(t, "tools:1", imageOf(t, testPlatform, layer(t, file("a", "1"))))
	addr := reg.srv.Listener.Addr().String()
	var d net.Dialer
	// Every name and address leads to the test registry.
	transport := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}
	for _, host := range []string{"registry.test:5000", "10.1.2.3:5000"} {
		t.Run(host, func(t *testing.T) {
			ref := host + "/tools:1"
			reg.reset()
			s := openStore(t, t.TempDir(), Options{Transport: transport})
			if _, err := s.Resolve(context.Background(), ref); err == nil {
				t.Errorf("resolved %s over plain HTTP without listing it", ref)
			}
			if log := reg.log(); log != "" {
				t.Errorf("the registry answered:\n%s", log)
			}

			s = openStore(t, t.TempDir(), Options{Transport: transport, Insecure: []string{host}})
			got, err := pull(t, s, ref)
			if err != nil {
				t.Fatalf("listed as insecure: %v", err)
			}
			if tree := listTree(t, got.Root); tree != "a = 1" {
				t.Errorf("tree %q", tree)
			}
		})
	}
}

// The guard itself: plain HTTP to an unlisted host fails before any
// connection, with ErrInsecure.
func TestHTTPGuard(t *testing.T) {
	dialed := 0
	g := httpGuard{next: roundTripFunc(func(*http.Request) (*http.Response, error) {
		dialed++
		return nil, errors.New("sent")
	}), insecure: map[string]bool{"ok.test:5000": true}}
	for url, want := range map[string]error{
		"http://evil.test:5000/v2/":               ErrInsecure,
		"http://10.0.0.1/v2/":                     ErrInsecure,
		"http://ok.test:5000/v2/":                 nil,
		"http://ok.test/v2/":                      ErrInsecure, // another port
		"http://127.0.0.1:1234/v2/":               nil,
		"http://[::1]:1234/v2/":                   nil,
		"http://localhost:1234/v2/":               nil,
		"https://evil.test:5000/v2/":              nil,
		"https://127.0.0.1:1234/v2/":              errLoopbackTLS, // the version check only
		"https://[::1]:1234/v2/":                  errLoopbackTLS,
		"https://127.0.0.1:1234/v2/r/manifests/1": nil,
	} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		before := dialed
		_, err := g.RoundTrip(req)
		if want != nil && (!errors.Is(err, want) || dialed != before) {
			t.Errorf("%s: err = %v, sent: %v; want %v and nothing sent", url, err, dialed != before, want)
		}
		if want == nil && dialed == before {
			t.Errorf("%s: not sent (%v)", url, err)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Resolving a tag on a loopback registry checks its version over plain
// HTTP only: no connection opens with a TLS handshake, which could not
// have served the pull (every later request there is plain HTTP), and the
// tag still resolves, with credentials too.
func TestLoopbackResolveTriesNoTLS(t *testing.T) {
	for _, auth := range []bool{false, true} {
		reg := newRegistry(t)
		var opts Options
		if auth {
			reg.user, reg.pass = "kilroy", "pw"
			opts.AuthFile = authFile(t, reg.host, reg.user, reg.pass)
		}
		ref := reg.push(t, "tools:1", imageOf(t, testPlatform, layer(t, file("a", "1"))))
		reg.tlsHellos.Store(0)
		// A transport of its own: no connection kept from the push.
		opts.Transport = http.DefaultTransport.(*http.Transport).Clone()
		s := openStore(t, t.TempDir(), opts)
		got, err := s.Resolve(context.Background(), ref)
		if err != nil || got.Digest == "" {
			t.Fatalf("auth %v: Resolve = %+v, %v", auth, got, err)
		}
		if n := reg.tlsHellos.Load(); n != 0 {
			t.Errorf("auth %v: %d connections to the loopback registry opened with a TLS handshake, want 0", auth, n)
		}
	}
}
