package deploy

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/appsetup"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// TestComposeReplicas: compose.replicas.yml adds a second replica that
// runs the same image with the same security options, devices, settings and
// queue as the bot of compose.yml and compose.postgres.yml, on a data
// volume of its own and a host port of its own, and both read the one
// App from a volume mounted read-only where serve looks for it.
func TestComposeReplicas(t *testing.T) {
	base, pg, rep := readCompose(t, "compose.yml"), readCompose(t, "compose.postgres.yml"), readCompose(t, "compose.replicas.yml")
	bot, bot2 := base.Services["bot"], rep.Services["bot-2"]
	data := dockerfileEnv(t, "KILROY_DATA_DIR")
	app := appsetup.FilesIn(data).Dir + ":ro"
	env := map[string]string{}
	for _, m := range []map[string]string{bot.Environment, pg.Services["bot"].Environment} {
		for k, v := range m {
			env[k] = v
		}
	}
	got := map[string]any{
		"image":       bot2.Image,
		"security":    bot2.SecurityOpt,
		"devices":     bot2.Devices,
		"env file":    bot2.EnvFile,
		"environment": bot2.Environment,
		"bot volumes": rep.Services["bot"].Volumes,
		"volumes":     bot2.Volumes,
		"depends on":  bot2.DependsOn["postgres"],
		"new volumes": rep.Volumes,
	}
	want := map[string]any{
		"image":       bot.Image,
		"security":    bot.SecurityOpt,
		"devices":     bot.Devices,
		"env file":    bot.EnvFile,
		"environment": env,
		"bot volumes": []string{"kilroy-app:" + app},
		"volumes":     []string{"kilroy-data-2:" + data, "kilroy-app:" + app},
		"depends on":  pg.Services["bot"].DependsOn["postgres"],
		"new volumes": map[string]struct{ Name string }{"kilroy-data-2": {}, "kilroy-app": {}},
	}
	if diff := gocmp.Diff(got, want); diff != "" {
		t.Errorf("compose.replicas.yml (-got +want):\n%s", diff)
	}
	p1, p2 := bot.Ports, bot2.Ports
	if len(p1) != 1 || len(p2) != 1 || p1[0] == p2[0] || !strings.HasPrefix(p2[0], "127.0.0.1:") {
		t.Errorf("the replicas publish %v and %v: want one port each, distinct, on 127.0.0.1", p1, p2)
	}
}

// TestComposeUpReplicas brings compose.yml, compose.postgres.yml and
// compose.replicas.yml up with podman-compose (the Postgres image from
// scripts/install-podman.sh, which keeps the official image's contract),
// with the App stored once in the App volume. Both replicas start and
// answer /healthz on their own ports; deliveries sent to one replica only
// are worked by both, from the one queue in Postgres; after a SIGKILL of
// that replica, the other takes what is delivered to it. GitHub is a
// closed port here, so no run completes: runs completing after a SIGKILL
// are TestComposeReplicaTakeoverCompletesChecks', on a fake GitHub.
func TestComposeUpReplicas(t *testing.T) {
	podmanCompose(t)
	payload, err := os.ReadFile(filepath.Join("..", "..", "shared", "testdata", "github", "webhooks", "pull_request", "opened.payload.json"))
	if err != nil {
		t.Skipf("the shared GitHub fixtures are not beside the checkout (../shared/testdata/github): %v", err)
	}
	c, _, second := newReplicasTest(t)
	c.up(t)
	c.waitFor(t, "the second replica to answer /healthz", func() bool { return healthy(second + "/healthz") })

	psql := func(query string) string {
		return strings.TrimSpace(run(t, "podman", "exec", c.project+"_postgres_1", "psql", "-U", "kilroy", "-d", "kilroy", "-Atc", query))
	}
	// The clients that worked the events, by replica: river names a
	// client after its host, the container.
	workers := func() []string {
		var hosts []string
		for _, id := range strings.Fields(psql("select distinct unnest(attempted_by) from river_job")) {
			host, _, _ := strings.Cut(id, "_")
			if !slices.Contains(hosts, host) {
				hosts = append(hosts, host)
			}
		}
		return hosts
	}
	deliveries := 0
	deliver := func(base string) {
		t.Helper()
		deliveries++
		body := bytes.Replace(payload, []byte(`"action"`), []byte(fmt.Sprintf(`"kilroy_test_delivery":%d,"action"`, deliveries)), 1)
		req, err := http.NewRequest(http.MethodPost, base+"/webhooks/github", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "pull_request")
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("compose-replicas-%d-%d", os.Getpid(), deliveries))
		req.Header.Set("X-Hub-Signature-256", ghapptest.Signature256([]byte(storedWebhookSecret), body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("delivery %d to %s: %s", deliveries, base, resp.Status)
		}
	}
	host := func(svc string) string {
		return strings.TrimSpace(run(t, "podman", "inspect", "--format", "{{.Config.Hostname}}", c.project+"_"+svc+"_1"))
	}
	host1, host2 := host("bot"), host("bot-2")
	first := fmt.Sprintf("http://127.0.0.1:%d", c.port)
	c.waitFor(t, "both replicas to work events delivered to the first", func() bool {
		deliver(first)
		w := workers()
		return slices.Contains(w, host1) && slices.Contains(w, host2)
	})
	if w := workers(); len(w) != 2 {
		t.Errorf("events were worked by %v, want the two replicas %s and %s only", w, host1, host2)
	}

	run(t, "podman", "kill", "--signal", "KILL", c.project+"_bot_1")
	last := psql("select coalesce(max(id), 0) from river_job")
	c.waitFor(t, "the second replica to work what is delivered to it after the first is killed", func() bool {
		deliver(second)
		return psql("select count(*) from river_job where id > "+last+" and attempted_by[1] like '"+host2+"\\_%'") != "0"
	})
	if !healthy(second + "/healthz") {
		t.Errorf("the second replica stopped answering /healthz after the first was killed")
	}
	t.Logf("replicas %s and %s worked events from one queue; %d deliveries", host1, host2, deliveries)
	c.down(t, "compose.yml", "compose.postgres.yml", "compose.replicas.yml")
}

// newReplicasTest is the compose test of compose.yml, compose.postgres.yml
// and compose.replicas.yml, the App in the App volume, the second replica
// on a host port of its own (second is its base URL), and Postgres from
// pgImage: KILROY_POSTGRES_IMAGE (scripts/install-podman.sh's, which keeps
// the official image's contract) or the official one. It skips t when
// podman has no such image. Bringing it up is the caller's.
func newReplicasTest(t *testing.T) (c *composeTest, pgImage, second string) {
	t.Helper()
	pgImage = cmp.Or(os.Getenv("KILROY_POSTGRES_IMAGE"), "postgres:17")
	if exec.Command("podman", "image", "exists", pgImage).Run() != nil {
		t.Skipf("no Postgres image %s here, and no registry to pull one from: scripts/install-podman.sh builds one and prints KILROY_POSTGRES_IMAGE", pgImage)
	}
	c = newComposeTest(t, "deploy/compose.yml", "deploy/compose.postgres.yml", "deploy/compose.replicas.yml")
	c.appVolume, c.appAt = "kilroy-app", appsetup.FilesIn(dockerfileEnv(t, "KILROY_DATA_DIR")).Dir
	c.skipIfVolumesExist(t, "compose.yml", "compose.postgres.yml", "compose.replicas.yml")
	port2 := freePort(t)
	c.env = append(c.env, "POSTGRES_PASSWORD=composetest", "KILROY_POSTGRES_IMAGE="+pgImage, "KILROY_PORT_2="+strconv.Itoa(port2))
	return c, pgImage, fmt.Sprintf("http://127.0.0.1:%d", port2)
}

// waitFor polls cond (which may act, like a delivery) every second until
// it holds, failing t with the containers' logs after imageWait.
func (c *composeTest) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	c.waitWithin(t, imageWait, what, cond, nil)
}

// waitWithin polls cond every second for at most d, and fails naming what
// it waited for, with more (when not nil) and the containers' last log
// lines.
func (c *composeTest) waitWithin(t *testing.T, d time.Duration, what string, cond func() bool, more func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			var b strings.Builder
			if more != nil {
				b.WriteString(more())
			}
			b.WriteString("container logs:\n")
			for _, id := range c.containers(t) {
				b.WriteString(logs(id, "40"))
			}
			t.Fatalf("waited %s for %s; %s", d, what, b.String())
		}
		time.Sleep(time.Second) // polling containers, not synchronising goroutines
	}
}
