package image

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// benchImage is ~50 MB uncompressed: 5 layers of 100 files of 100 KiB,
// half random (incompressible, like binaries) and half text.
func benchImage(b *testing.B) (v1.Image, int64) {
	b.Helper()
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	var layers []v1.Layer
	var total int64
	for l := range 5 {
		var ents []ent
		for f := range 100 {
			body := make([]byte, 100<<10)
			for i := range body[:len(body)/2] {
				body[i] = byte(rng.Uint32())
			}
			for i := len(body) / 2; i < len(body); i++ {
				body[i] = "abcdefghij klmnop\n"[rng.IntN(18)]
			}
			ents = append(ents, file(fmt.Sprintf("usr/lib/l%d/f%03d", l, f), string(body)))
			total += int64(len(body))
		}
		layers = append(layers, layer(b, ents...))
	}
	return imageOf(b, testPlatform, layers...), total
}

// The first pull of an image: resolve, fetch, verify and unpack, from a
// registry on loopback.
func BenchmarkPullAndUnpack(b *testing.B) {
	img, total := benchImage(b)
	reg := newRegistry(b)
	ref := reg.push(b, "bench:1", img)
	parent := b.TempDir()
	ctx := context.Background()
	b.SetBytes(total)
	b.ResetTimer()
	for range b.N {
		root, err := os.MkdirTemp(parent, "store")
		if err != nil {
			b.Fatal(err)
		}
		s := openStore(b, root, Options{})
		r, err := s.Resolve(ctx, ref)
		if err != nil {
			b.Fatal(err)
		}
		got, err := s.Ensure(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		got.Release()
		removeTree(root)
		b.StartTimer()
	}
}

// A digest already unpacked: what every later run of the image pays.
func BenchmarkEnsureCached(b *testing.B) {
	reg := newRegistry(b)
	ref := reg.push(b, "small:1", imageOf(b, testPlatform, layer(b, file("a", "1"))))
	s := openStore(b, b.TempDir(), Options{})
	ctx := context.Background()
	r, err := s.Resolve(ctx, ref)
	if err != nil {
		b.Fatal(err)
	}
	reg.reset()
	b.ResetTimer()
	for range b.N {
		got, err := s.Ensure(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		got.Release()
	}
	b.StopTimer()
	if n := reg.count("GET", "/blobs/"); n != 1+1 {
		b.Errorf("%d blob fetches for %d Ensures, want 2 (one pull)", n, b.N)
	}
}
