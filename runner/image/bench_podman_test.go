package image

import (
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// BenchmarkFirstPullVsPodman compares the first pull and unpack of a
// ~350 MB image (uncompressed: this host's Go toolchain and Debian's
// python3 as two layers, ~110 MB compressed) into an empty store with
// `podman pull` of the same image from the same registry on loopback,
// into podman's own storage, the image removed after each. The two
// alternate within one run, taking turns at going first, one pair per
// iteration (use -benchtime Nx, N >= 5); it reports each median and the
// ratio ours/podman per pair: median, min and max (target: at most 1.5).
// The image has no layer podman already holds (the Debian base's would
// be skipped by podman as present). Needs podman, as root here.
//
//	go test -run '^$' -bench FirstPullVsPodman -benchtime 5x ./runner/image/
func BenchmarkFirstPullVsPodman(b *testing.B) {
	if _, err := exec.LookPath("podman"); err != nil {
		b.Skip("podman is not installed: scripts/install-podman.sh installs it")
	}
	goLayer, _ := imagetest.GoLayer(b)
	img := imageOf(b, testPlatform, goLayer, imagetest.PythonLayer(b))
	reg := newRegistry(b)
	ref := reg.push(b, "bench/toolchains:1", img)
	var total int64
	layers, err := img.Layers()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	b.Logf("image: %d layers, %d MB uncompressed", len(layers), total>>20)
	podman(b, "rmi", "--ignore", ref)
	parent := b.TempDir()
	ctx := context.Background()
	var ours, theirs []time.Duration
	var ratio []float64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		var o, p time.Duration
		if i%2 == 0 {
			o, p = pullOurs(b, ctx, parent, ref), pullPodman(b, ref)
		} else {
			p, o = pullPodman(b, ref), pullOurs(b, ctx, parent, ref)
		}
		ours, theirs = append(ours, o), append(theirs, p)
		ratio = append(ratio, float64(o)/float64(p))
	}
	b.StopTimer()
	b.ReportMetric(float64(median(ours))/1e6, "ours-ms")
	b.ReportMetric(float64(median(theirs))/1e6, "podman-ms")
	b.ReportMetric(median(ratio), "ratio")
	b.ReportMetric(slices.Min(ratio), "ratio-min")
	b.ReportMetric(slices.Max(ratio), "ratio-max")
	b.ReportMetric(float64(len(ratio)), "pairs")
}

// pullOurs resolves and ensures ref in an empty store, then removes it
// (untimed).
func pullOurs(b *testing.B, ctx context.Context, parent, ref string) time.Duration {
	root, err := os.MkdirTemp(parent, "store")
	if err != nil {
		b.Fatal(err)
	}
	s := openStore(b, root, Options{})
	t0 := time.Now()
	r, err := s.Resolve(ctx, ref)
	if err != nil {
		b.Fatal(err)
	}
	got, err := s.Ensure(ctx, r)
	if err != nil {
		b.Fatal(err)
	}
	d := time.Since(t0)
	got.Release()
	removeTree(root)
	return d
}

// pullPodman pulls ref with podman, then removes it (untimed).
func pullPodman(b *testing.B, ref string) time.Duration {
	t0 := time.Now()
	podman(b, "pull", "-q", "--tls-verify=false", ref)
	d := time.Since(t0)
	podman(b, "rmi", ref)
	return d
}

func podman(b *testing.B, args ...string) {
	b.Helper()
	if out, err := exec.Command("podman", args...).CombinedOutput(); err != nil {
		b.Fatalf("podman %v: %v\n%s", args, err, out)
	}
}

func median[T time.Duration | float64](d []T) T {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
