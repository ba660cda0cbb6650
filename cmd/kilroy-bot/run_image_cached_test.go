package main

import (
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// resolveOnly matches the requests that resolve a tag: the registry's
// version check and the tag's manifest (HEAD, or GET when HEAD is not
// enough).
var resolveOnly = regexp.MustCompile(`^(GET /v2/|(HEAD|GET) /v2/[a-z0-9/._-]+/manifests/[A-Za-z0-9_.-]+)$`)

// pullRequests are the requests of reqs that do more than resolve a tag
// (blobs, manifests by digest).
func pullRequests(reqs []string) []string {
	return slices.DeleteFunc(slices.Clone(reqs), func(r string) bool {
		return resolveOnly.MatchString(r) && !strings.Contains(r, "/manifests/sha256:")
	})
}

// cachedImageRun is a one-node pipeline, in a repository, and an image
// of the host's bash and cat served by a logged registry on loopback.
func cachedImageRun(tb testing.TB) (repo, ref string, reqs *imagetest.RequestLog) {
	tb.Helper()
	tree := tb.TempDir()
	imagetest.Rootfs(tb, tree, "bash", "cat")
	host, reqs := imagetest.LoggedRegistry(tb)
	ref = host + "/test/tools:1"
	imagetest.Push(tb, ref, imagetest.Image(tb, tree, testImageEnv))
	reqs.Take()
	repo = newRepo(tb, map[string]string{".kilroy/ci.dot": dotFor(`  n [shape=parallelogram, tool_command="true"]
  start -> n -> exit`)})
	return repo, ref, reqs
}

// runImage runs the repository's pipeline in image (or "host") with the
// data dir data, failing unless it passes.
func runImage(tb testing.TB, repo, data, image string) {
	tb.Helper()
	code, stdout, stderr := runCmd("run", "--repo", repo, "--run-dir", filepath.Join(tb.TempDir(), "run"), "--data-dir", data,
		"--image", image)
	if code != 0 {
		tb.Fatalf("run --image %s exited %d\nstdout:\n%s\nstderr:\n%s", image, code, stdout, stderr)
	}
}

// A second run of an image already unpacked asks the registry only to
// resolve the tag (the run pins whatever it names now): no blob, no
// manifest by digest. The first run's blob fetches show the log works.
func TestRunCachedImageOnlyResolvesTag(t *testing.T) {
	needSandbox(t)
	repo, ref, reqs := cachedImageRun(t)
	data := t.TempDir()
	runImage(t, repo, data, ref)
	if first := pullRequests(reqs.Take()); !slices.ContainsFunc(first, func(r string) bool { return strings.Contains(r, "/blobs/") }) {
		t.Fatalf("the first run fetched no blob: %q", first)
	}
	runImage(t, repo, data, ref)
	second := reqs.Take()
	t.Logf("the second run's requests: %q", second)
	if extra := pullRequests(second); len(extra) > 0 {
		t.Errorf("the second run asked the registry for more than the tag: %q (all: %q)", extra, second)
	}
	if !slices.ContainsFunc(second, func(r string) bool { return strings.HasSuffix(r, "/test/tools/manifests/1") }) {
		t.Errorf("the second run did not resolve the tag: %q", second)
	}
}

// BenchmarkRunCachedImage compares whole `kilroy-bot run`s of a one-node
// pipeline (`true`) in the host jail and in an image already unpacked
// (resolving its tag, checking the cache, the image jail), alternating
// within one run and taking turns at going first, one pair per
// iteration. It reports each median, their ratio, and the ratio
// image/host per pair: median, min and max (target: within 1.01), with
// the median's 95% confidence interval (ratio-ci-lo, ratio-ci-hi), their
// geometric mean with its own (geomean, which a shift of the slower half
// moves where the median may not), and
// the requests beyond resolving the tag that the image runs made (want 0).
// A pair's ratio strays by ±20% on this kind of machine (the disk's
// writeback), so 40 pairs place the median within ±2% only; the interval
// says how many pairs a verdict needs (a few hundred for 1%).
// cpu-ratio is the median per pair of the CPU time the two runs took (this
// process's and its children's: git, bwrap, the node): on a busy machine
// the wall-clock ratio of two identical runs strays by several percent,
// their CPU-time ratio by about two.
//
//	go test -run '^$' -bench RunCachedImage -benchtime 1200x ./cmd/kilroy-bot/
func BenchmarkRunCachedImage(b *testing.B) {
	if why := sandboxMissing(); why != "" {
		b.Skipf("needs the node sandbox: %s", why)
	}
	repo, ref, reqs := cachedImageRun(b)
	data := b.TempDir()
	runImage(b, repo, data, ref) // the pull
	runImage(b, repo, data, "host")
	reqs.Take()
	timed := func(image string) (wall, cpu time.Duration) {
		c0, t0 := cpuTime(b), time.Now()
		runImage(b, repo, data, image)
		return time.Since(t0), cpuTime(b) - c0
	}
	var host, img []time.Duration
	var ratio, cpuRatio []float64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		var h, m, hc, mc time.Duration
		if i%2 == 0 {
			h, hc = timed("host")
			m, mc = timed(ref)
		} else {
			m, mc = timed(ref)
			h, hc = timed("host")
		}
		host, img, ratio = append(host, h), append(img, m), append(ratio, float64(m)/float64(h))
		cpuRatio = append(cpuRatio, float64(mc)/float64(hc))
	}
	b.StopTimer()
	extra := pullRequests(reqs.Take())
	if len(extra) > 0 {
		b.Errorf("runs of the cached image asked for more than the tag: %q", extra)
	}
	hostMedian, imgMedian := slices.Sorted(slices.Values(host))[len(host)/2], slices.Sorted(slices.Values(img))[len(img)/2]
	b.ReportMetric(float64(hostMedian)/1e6, "host-ms")
	b.ReportMetric(float64(imgMedian)/1e6, "image-ms")
	b.ReportMetric(float64(imgMedian)/float64(hostMedian), "medians-ratio")
	b.ReportMetric(slices.Sorted(slices.Values(ratio))[len(ratio)/2], "ratio")
	b.ReportMetric(slices.Min(ratio), "ratio-min")
	b.ReportMetric(slices.Max(ratio), "ratio-max")
	lo, hi := medianCI(ratio)
	b.ReportMetric(lo, "ratio-ci-lo")
	b.ReportMetric(hi, "ratio-ci-hi")
	g, glo, ghi := geomeanCI(ratio)
	b.ReportMetric(g, "geomean")
	b.ReportMetric(glo, "geomean-ci-lo")
	b.ReportMetric(ghi, "geomean-ci-hi")
	b.ReportMetric(slices.Sorted(slices.Values(cpuRatio))[len(cpuRatio)/2], "cpu-ratio")
	b.ReportMetric(float64(len(extra)), "pull-requests")
}

// cpuTime is the CPU time (user and system) this process and its waited-for
// children have used so far.
func cpuTime(tb testing.TB) time.Duration {
	tb.Helper()
	var self, children syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children); err != nil {
		tb.Fatal(err)
	}
	var ns int64
	for _, tv := range []syscall.Timeval{self.Utime, self.Stime, children.Utime, children.Stime} {
		ns += tv.Nano()
	}
	return time.Duration(ns)
}

// medianCI is a 95% confidence interval of the median of xs, free of any
// assumption about their distribution: the order statistics n/2 ∓
// 0.98·√n (the binomial's normal approximation), clamped to xs.
func medianCI(xs []float64) (lo, hi float64) {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	k := max(0, int(math.Floor(float64(n)/2-0.98*math.Sqrt(float64(n)))))
	return s[k], s[min(n-1, n-1-k)]
}

func TestGeomeanCI(t *testing.T) {
	g, lo, hi := geomeanCI([]float64{0.5, 2, 0.5, 2})
	// logs ±ln 2: mean 0, sd ln 2·√(4/3), se sd/2.
	want := math.Exp(1.96 * math.Ln2 * math.Sqrt(4.0/3) / 2)
	if math.Abs(g-1) > 1e-12 || math.Abs(hi-want) > 1e-12 || math.Abs(lo-1/want) > 1e-12 {
		t.Errorf("geomeanCI = %v [%v, %v]; want 1 [%v, %v]", g, lo, hi, 1/want, want)
	}
	if g, lo, hi := geomeanCI([]float64{4}); g != 4 || lo != 4 || hi != 4 {
		t.Errorf("geomeanCI([4]) = %v [%v, %v]", g, lo, hi)
	}
}

func TestMedianCI(t *testing.T) {
	var xs []float64
	for i := range 100 {
		xs = append(xs, float64(99-i)) // 0…99, reversed
	}
	// n = 100: ranks 50 ∓ 9.8, floor(40.2) = 40 and 59.
	if lo, hi := medianCI(xs); lo != 40 || hi != 59 {
		t.Errorf("medianCI(0…99) = %v, %v; want 40, 59", lo, hi)
	}
	if lo, hi := medianCI([]float64{3}); lo != 3 || hi != 3 {
		t.Errorf("medianCI([3]) = %v, %v", lo, hi)
	}
	if lo, hi := medianCI([]float64{2, 1}); lo != 1 || hi != 2 {
		t.Errorf("medianCI([2 1]) = %v, %v", lo, hi)
	}
}

// geomeanCI is the geometric mean of xs (all > 0) with a 95% confidence
// interval: the mean of their logarithms ± 1.96 standard errors, back
// from logarithms.
func geomeanCI(xs []float64) (g, lo, hi float64) {
	var sum, sq float64
	for _, x := range xs {
		l := math.Log(x)
		sum, sq = sum+l, sq+l*l
	}
	n := float64(len(xs))
	mean := sum / n
	se := 0.0
	if n > 1 {
		se = math.Sqrt(max(0, (sq-sum*sum/n)/(n-1)) / n)
	}
	return math.Exp(mean), math.Exp(mean - 1.96*se), math.Exp(mean + 1.96*se)
}
