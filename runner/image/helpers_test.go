package image

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// testPlatform is what the tests pull for, whatever the host is.
const testPlatform = "linux/amd64"

// ent is one tar entry of a test layer.
type ent struct {
	name string
	typ  byte // tar.TypeReg when 0
	body string
	mode int64 // 0644, or 0755 for directories, when 0
	link string
}

func file(name, body string) ent { return ent{name: name, body: body} }
func dir(name string) ent        { return ent{name: name, typ: tar.TypeDir} }
func symlink(name, target string) ent {
	return ent{name: name, typ: tar.TypeSymlink, link: target}
}
func hardlink(name, target string) ent { return ent{name: name, typ: tar.TypeLink, link: target} }

// tarBytes writes the entries as an uncompressed tar stream.
func tarBytes(t testing.TB, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, ModTime: time.Unix(1700000000, 0)}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
			if h.Typeflag == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("tar header %q: %v", e.name, err)
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// layer is a gzip layer of the entries, as a registry would serve it.
func layer(t testing.TB, ents ...ent) v1.Layer {
	t.Helper()
	b := tarBytes(t, ents...)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// imageOf stacks layers on an empty image for a platform, with a config
// the tests look for.
func imageOf(t testing.TB, platform string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config = v1.Config{Env: []string{"PATH=/usr/local/go/bin:/usr/bin:/bin", "GOTOOLCHAIN=local"}, WorkingDir: "/src", User: "1000:1000"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// testRegistry is go-containerregistry's registry on loopback, recording
// the requests it answers; optionally behind HTTP basic auth, optionally
// lying about some blobs.
type testRegistry struct {
	srv  *httptest.Server
	host string // 127.0.0.1:PORT

	user, pass string // basic auth when user is set

	mu       sync.Mutex
	requests []string                 // "METHOD /v2/…"
	lies     map[string][]byte        // digest → what to serve instead
	served   map[string]int64         // digest → bytes of blob bodies written
	hold     map[string]chan struct{} // digest → blob GETs wait for it to close

	tlsHellos atomic.Int32 // connections that opened with a TLS handshake
}

// helloCounter counts the connections whose first byte is a TLS handshake
// record's (a client trying HTTPS on the plain HTTP server).
type helloCounter struct {
	net.Listener
	n *atomic.Int32
}

func (l helloCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &firstByteConn{Conn: c, n: l.n}, nil
}

type firstByteConn struct {
	net.Conn
	n    *atomic.Int32
	seen bool
}

func (c *firstByteConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.seen && n > 0 {
		c.seen = true
		if p[0] == 0x16 { // TLS record type: handshake
			c.n.Add(1)
		}
	}
	return n, err
}

func newRegistry(t testing.TB) *testRegistry {
	t.Helper()
	r := &testRegistry{lies: map[string][]byte{}, served: map[string]int64{}, hold: map[string]chan struct{}{}}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.serve(w, req, inner)
	}))
	r.srv.Listener = helloCounter{Listener: r.srv.Listener, n: &r.tlsHellos}
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	r.host = strings.TrimPrefix(r.srv.URL, "http://")
	return r
}

func (r *testRegistry) serve(w http.ResponseWriter, req *http.Request, inner http.Handler) {
	if r.user != "" {
		u, p, ok := req.BasicAuth()
		if !ok || u != r.user || p != r.pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
	}
	digest := ""
	if i := strings.LastIndex(req.URL.Path, "/blobs/"); i >= 0 {
		digest = req.URL.Path[i+len("/blobs/"):]
	}
	r.mu.Lock()
	r.requests = append(r.requests, req.Method+" "+req.URL.Path)
	lie, lying := r.lies[digest]
	hold := r.hold[digest]
	r.mu.Unlock()
	if req.Method == http.MethodGet && digest != "" {
		if hold != nil {
			select {
			case <-hold:
			case <-req.Context().Done():
				return
			}
		}
		cw := &countingWriter{ResponseWriter: w}
		defer func() {
			r.mu.Lock()
			r.served[digest] += cw.n
			r.mu.Unlock()
		}()
		w = cw
		if lying {
			w.Header().Set("Content-Length", fmt.Sprint(len(lie)))
			w.Write(lie)
			return
		}
	}
	inner.ServeHTTP(w, req)
}

type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

// reset forgets the requests so far (the pushes).
func (r *testRegistry) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = nil
	r.served = map[string]int64{}
}

// count is how many recorded requests have the method and contain part.
func (r *testRegistry) count(method, part string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.requests {
		if strings.HasPrefix(q, method+" ") && strings.Contains(q, part) {
			n++
		}
	}
	return n
}

func (r *testRegistry) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.requests, "\n")
}

func (r *testRegistry) lie(digest v1.Hash, body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lies[digest.String()] = body
}

func (r *testRegistry) servedBytes(digest v1.Hash) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.served[digest.String()]
}

func (r *testRegistry) pushOpts() []remote.Option {
	if r.user == "" {
		return nil
	}
	return []remote.Option{remote.WithAuth(&authn.Basic{Username: r.user, Password: r.pass})}
}

// push writes the image as repo:tag and returns "HOST/repo:tag".
func (r *testRegistry) push(t testing.TB, repoTag string, img v1.Image) string {
	t.Helper()
	ref, err := name.ParseReference(r.host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, r.pushOpts()...); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return ref.String()
}

func (r *testRegistry) pushIndex(t testing.TB, repoTag string, idx v1.ImageIndex) string {
	t.Helper()
	ref, err := name.ParseReference(r.host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx, r.pushOpts()...); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return ref.String()
}

// authFile writes a docker config.json with one registry's credentials.
func authFile(t testing.TB, host, user, pass string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.json")
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	body := fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, host, auth)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func openStore(t testing.TB, root string, opts Options) *Store {
	t.Helper()
	if opts.Platform == "" {
		opts.Platform = testPlatform
	}
	s, err := Open(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pull resolves and ensures a reference, releasing the image at the end of
// the test.
func pull(t testing.TB, s *Store, ref string) (*Image, error) {
	t.Helper()
	ctx := context.Background()
	r, err := s.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	img, err := s.Ensure(ctx, r)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { img.Release() })
	return img, nil
}

// listTree lists a directory's entries, one per line: the path, then
// "/" for a directory, "-> target" for a link, "= content" for a file.
// For an image's tree it lists the image's own: not the mount points the
// store added, which its image.json lists (TestMountPoints checks them).
func listTree(t testing.TB, root string) string {
	t.Helper()
	var added []string
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(root), metaFile)); err == nil {
		var c Config
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		added = c.MountPoints
	}
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if slices.Contains(added, "/"+rel) {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			lines = append(lines, rel+" -> "+target)
		case d.IsDir():
			lines = append(lines, rel+"/")
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			lines = append(lines, rel+" = "+string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// assertEmpty fails unless dir holds nothing.
func assertEmpty(t testing.TB, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Errorf("%s is not empty:\n%s", dir, listTree(t, dir))
	}
}

// images lists the store's image directories.
func images(t testing.TB, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if hexName(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func emptyIndex() v1.ImageIndex { return mutate.IndexMediaType(empty.Index, types.OCIImageIndex) }

// waitFor polls cond until it holds, failing the test after ten seconds.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
