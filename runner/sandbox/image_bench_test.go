package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
)

// BenchmarkImageJailStart compares a cold start of /bin/true in the host
// jail with one in an image jail (the host's true and its libraries as an
// image with /proc, /dev, /etc, /home and /var as a Debian base has them,
// and the mount points the image store adds to every tree it unpacks),
// alternating within one run; it reports each median and the image jail's
// extra cost per start (median, min, max; target: at most 0.5 ms).
//
//	go test -run '^$' -bench ImageJailStart -benchtime 200x ./runner/sandbox/
func BenchmarkImageJailStart(b *testing.B) {
	s := benchSandbox(b)
	root := b.TempDir()
	imagetest.Rootfs(b, root, "true")
	for _, d := range []string{"proc", "dev", "home", "var/tmp", "var/lib/dpkg", "root", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := AddMountPoints(root); err != nil {
		b.Fatal(err)
	}
	img := s.WithImage(Image{Root: root, Name: "bench", Env: []string{"PATH=/usr/bin:/bin"}})
	ws := b.TempDir()
	hostEnv := NodeEnv(EnvSpec{Host: HostEnv()})
	imageEnv := NodeEnv(EnvSpec{Host: HostEnv(), Image: img.ImageEnv()})
	stage, managed := b.TempDir(), b.TempDir()
	hostJail, imageJail := NodeJail(s, HostEnv(), ws, stage, managed, ""), NodeJail(img, HostEnv(), ws, stage, managed, "")
	var host, image, diff []time.Duration
	b.ResetTimer()
	for b.Loop() {
		h := startTrue(b, ws, hostEnv, hostJail)
		i := startTrue(b, ws, imageEnv, imageJail)
		host, image, diff = append(host, h), append(image, i), append(diff, i-h)
	}
	b.StopTimer()
	b.ReportMetric(ms(median(host)), "host-ms")
	b.ReportMetric(ms(median(image)), "image-ms")
	b.ReportMetric(ms(median(diff)), "extra-ms")
	b.ReportMetric(ms(slices.Min(diff)), "extra-min-ms")
	b.ReportMetric(ms(slices.Max(diff)), "extra-max-ms")
}
