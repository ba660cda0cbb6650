package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"database/sql"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // reads the bot's queue after the run
)

var (
	deliveries  = flag.Int("deliveries", 4000, "deliveries sent to each side")
	concurrency = flag.Int("concurrency", 32, "concurrent senders")
	limit       = flag.Duration("limit", 2*time.Minute, "the most one side may take")
)

const secret = "bench-webhook-secret"

func BenchmarkWebhook(b *testing.B) {
	body := payload(b)
	bot := startBot(b)
	minimal := httptest.NewServer(http.HandlerFunc(hmacOnly))
	b.Cleanup(minimal.Close)

	for i := 0; i < b.N; i++ {
		base := load(b, "minimal", minimal.URL, body, fmt.Sprintf("min-%d-", i))
		got := load(b, "kilroy-bot serve", bot.url+"/webhooks/github", body, fmt.Sprintf("bot-%d-", i))
		bot.accepted += got.accepted
		drained := bot.waitIntake(b)
		b.Logf("every accepted delivery was an event job %s after the last acknowledgement (%.0f/s from the first send)",
			drained.Round(time.Millisecond), float64(got.accepted)/(got.elapsed+drained).Seconds())
		b.ReportMetric(ms(drained), "bot-drain-ms")
		b.ReportMetric(ms(got.p(0.50)), "bot-p50-ms")
		b.ReportMetric(ms(got.p(0.99)), "bot-p99-ms")
		b.ReportMetric(got.rate(), "bot-deliveries/s")
		b.ReportMetric(ms(base.p(0.99)), "min-p99-ms")
		b.ReportMetric(base.rate(), "min-deliveries/s")
		b.Logf("throughput: kilroy-bot %.0f/s = %.2f of the minimal handler's %.0f/s",
			got.rate(), got.rate()/base.rate(), base.rate())
	}
	stored := bot.stop(b)
	b.Logf("durability: %d deliveries answered 202, %d recorded, %d event jobs enqueued",
		bot.accepted, stored.deliveries, stored.jobs)
	if stored.deliveries != bot.accepted || stored.jobs != bot.accepted {
		b.Errorf("accepted %d deliveries but the queue holds %d deliveries and %d event jobs",
			bot.accepted, stored.deliveries, stored.jobs)
	}
}

// payload is GitHub's real pull_request/opened payload (28 KB) from the
// shared test data beside the checkout, or else the webhook package's
// small fixture, said so: the size decides what HMAC and decoding cost.
func payload(b *testing.B) []byte {
	b.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "testdata", "github", "webhooks",
		"pull_request", "opened.payload.json"))
	if err != nil {
		b.Logf("shared payloads absent (%v): benchmarking the small fixture", err)
		body, err = os.ReadFile(filepath.Join("..", "..", "webhook", "testdata", "pull_request.opened.json"))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("payload: %d bytes", len(body))
	return body
}

// hmacOnly is the baseline: read, verify the signature, answer 202.
func hmacOnly(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 25<<20))
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	if !hmac.Equal([]byte(r.Header.Get("X-Hub-Signature-256")), []byte(sign(body))) {
		http.Error(w, "signature", http.StatusUnauthorized)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func sign(body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// result is one side's run.
type result struct {
	latencies []time.Duration
	elapsed   time.Duration
	accepted  int
}

func (r result) p(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func (r result) rate() float64 { return float64(len(r.latencies)) / r.elapsed.Seconds() }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// load sends the deliveries from the concurrent senders and times each
// acknowledgement. Anything but 202 fails the benchmark.
func load(b *testing.B, name, url string, body []byte, idPrefix string) result {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), *limit)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *concurrency}}
	sig := sign(body)
	next := make(chan int)
	var mu sync.Mutex
	res := result{latencies: make([]time.Duration, 0, *deliveries)}
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for range *concurrency {
		wg.Go(func() {
			for i := range next {
				d, code, err := send(ctx, client, url, fmt.Sprintf("%s%d", idPrefix, i), sig, body)
				mu.Lock()
				switch {
				case err != nil && firstErr == nil:
					firstErr = err
				case err == nil && code != http.StatusAccepted && firstErr == nil:
					firstErr = fmt.Errorf("delivery %d answered %d", i, code)
				case err == nil && code == http.StatusAccepted:
					res.latencies = append(res.latencies, d)
					res.accepted++
				}
				mu.Unlock()
			}
		})
	}
	for i := range *deliveries {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	res.elapsed = time.Since(start)
	if firstErr != nil {
		b.Fatalf("%s: %v", name, firstErr)
	}
	b.Logf("%s: %d deliveries in %s: p50 %s, p99 %s, %.0f/s", name, len(res.latencies),
		res.elapsed.Round(time.Millisecond), res.p(0.5).Round(10*time.Microsecond),
		res.p(0.99).Round(10*time.Microsecond), res.rate())
	return res
}

func send(ctx context.Context, c *http.Client, url, id, sig string, body []byte) (time.Duration, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", sig)
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(t0), resp.StatusCode, nil
}

// bot is a kilroy-bot serve process.
type bot struct {
	cmd      *exec.Cmd
	url      string
	dataDir  string
	accepted int
	exited   chan error
}

// startBot builds kilroy-bot and starts `serve` against a GitHub stub.
func startBot(b *testing.B) *bot {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "kilroy-bot")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/kilroy-bot")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	keyFile := filepath.Join(dir, "app.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY",
		Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		b.Fatal(err)
	}
	github := httptest.NewServer(http.NotFoundHandler())
	b.Cleanup(github.Close)
	addr := freeAddr(b)
	bt := &bot{url: "http://" + addr, dataDir: filepath.Join(dir, "data"), exited: make(chan error, 1)}
	bt.cmd = exec.Command(bin, "serve", "--listen", addr, "--data-dir", bt.dataDir,
		"--github-url", github.URL+"/api/v3/", "--app-id", "1", "--private-key-file", keyFile)
	bt.cmd.Env = append(os.Environ(), "KILROY_WEBHOOK_SECRET="+secret, "KILROY_ALLOW_ROOT=1") // the benchmark may run as root
	logs, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { logs.Close() })
	bt.cmd.Stdout, bt.cmd.Stderr = logs, logs
	if err := bt.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { bt.exited <- bt.cmd.Wait() }()
	b.Cleanup(func() {
		if bt.cmd.ProcessState == nil {
			_ = bt.cmd.Process.Kill()
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(bt.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return bt
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("kilroy-bot serve not ready within a minute: %v", err)
		}
		select {
		case err := <-bt.exited:
			b.Fatalf("kilroy-bot serve exited: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func freeAddr(b *testing.B) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitIntake waits until the bot's intake is empty, that is until every
// acknowledged delivery is an event job, and says how long that took. It
// reads the database beside the running bot (WAL lets a reader in).
func (bt *bot) waitIntake(b *testing.B) time.Duration {
	b.Helper()
	start := time.Now()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(bt.dataDir, "kilroy.db")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM intake`).Scan(&n); err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			return time.Since(start)
		}
		if time.Since(start) > *limit {
			b.Fatalf("%d deliveries still in the intake after %s", n, *limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stored is what the bot's database holds after it stopped.
type stored struct{ deliveries, jobs int }

// stop shuts the bot down (SIGTERM, a graceful stop) and counts the
// deliveries and event jobs in its database.
func (bt *bot) stop(b *testing.B) stored {
	b.Helper()
	if err := bt.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		b.Fatal(err)
	}
	select {
	case err := <-bt.exited:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			b.Fatal(err)
		}
	case <-time.After(*limit):
		b.Fatal("kilroy-bot serve did not stop")
	}
	db, err := sql.Open("sqlite", filepath.Join(bt.dataDir, "kilroy.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var s stored
	if err := db.QueryRow(`SELECT COUNT(*) FROM deliveries`).Scan(&s.deliveries); err != nil {
		b.Fatal(err)
	}
	// Counted after the stop: a graceful stop also empties the intake.
	if err := db.QueryRow(`SELECT COUNT(*) FROM river_job WHERE kind = 'kilroy.event'`).Scan(&s.jobs); err != nil {
		b.Fatal(err)
	}
	return s
}
