package deploy

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

// takeoverWait bounds the wait for the surviving replica to finish a run
// the killed one held: the queue's default heartbeat staleness (a minute)
// before the run is taken back, then the slow node run again.
const takeoverWait = 5 * time.Minute

// slowNode is how long the verify node of takeoverDOT runs: long enough
// to see its check in progress and kill the replica running it.
const slowNode = 40 * time.Second

// takeoverDOT: a tool node whose checkpoint the resumed run keeps, then
// a verify node that takes slowNode and succeeds.
var takeoverDOT = fmt.Sprintf(`digraph ci {
  start [shape=Mdiamond]
  build [shape=parallelogram, tool_command="echo built > build.txt"]
  slow [shape=octagon, command="sleep %d && echo slow done"]
  done [shape=Msquare]
  start -> build -> slow -> done
}
`, int(slowNode.Seconds()))

// TestComposeReplicaTakeoverCompletesChecks brings the replicas compose
// (compose.yml, compose.postgres.yml, compose.replicas.yml) up with
// podman-compose, pointed at a fake GitHub (ghapptest) that this test
// serves on the gateway of the project's network, so the containers reach
// it: its REST API, and git over `git http-backend` for the replicas'
// clones and pushes. The App stored in the App volume is the fake's. A
// pull_request delivery to the first replica starts a run whose verify
// node takes slowNode; once the fake shows that node's check in progress,
// the replica running it (either: the queue is shared) gets SIGKILL. The
// other replica takes the run over once the dead one's heartbeat is stale,
// rebuilds the run directory from Postgres and the run branch on the fake,
// and finishes it: every check run the fake recorded on the head SHA ends
// completed with a conclusion, the summary's success, and each node has
// one checkpoint on the run branch (build is not run again).
func TestComposeReplicaTakeoverCompletesChecks(t *testing.T) {
	podmanCompose(t)
	c, pgImage, second := newReplicasTest(t)
	gh := ghapptest.New(t, ghapptest.WithListenAddr(net.JoinHostPort(c.gateway(t, pgImage), "0")), ghapptest.WithAppID(storedAppID))
	repo := gh.AddRepo("octo", "widgets")
	repo.Commit(t, "main", map[string]string{".kilroy/ci.dot": takeoverDOT}, "initial")
	gh.SetPermission("octo", "widgets", "alice", "write")
	c.appKey, c.githubURL = gh.PrivateKeyPEM(), gh.APIURL()
	c.up(t)
	c.waitFor(t, "the second replica to answer /healthz", func() bool { return healthy(second + "/healthz") })

	sha := repo.Commit(t, "feature-1", map[string]string{"README.md": "change\n"}, "change")
	gh.PutPull("octo", "widgets", ghapptest.Pull{Number: 1, HeadSHA: sha, Author: "alice", BaseRef: "main", Files: []string{"README.md"}})
	body := prOpened(t, gh, repo, sha)
	req := ghapptest.SignedRequest(t, fmt.Sprintf("http://127.0.0.1:%d/webhooks/github", c.port), []byte(storedWebhookSecret),
		"pull_request", fmt.Sprintf("compose-takeover-%d", os.Getpid()), body)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("delivery to the first replica: %s, want 202", resp.Status)
	}

	checks := func() []*ghapptest.CheckRun {
		var out []*ghapptest.CheckRun
		for _, r := range gh.CheckRuns("octo", "widgets") {
			if r.HeadSHA == sha {
				out = append(out, r)
			}
		}
		return out
	}
	named := func(name string) *ghapptest.CheckRun {
		var last *ghapptest.CheckRun
		for _, r := range checks() {
			if r.Name == name {
				last = r
			}
		}
		return last
	}
	c.waitFor(t, "the check of node slow to be in progress", func() bool {
		r := named("kilroy/ci/slow")
		return r != nil && r.Status == "in_progress"
	})
	id := named("kilroy/ci").ExternalID
	// The replica running the run holds its run directory, node slow's
	// stage in it; the other has none.
	stage := dockerfileEnv(t, "KILROY_DATA_DIR") + "/runs/" + id + "/nodes/slow"
	var killed, survivor string
	c.waitFor(t, "one replica to hold run "+id+" in node slow", func() bool {
		killed, survivor = "", ""
		for _, svc := range []string{"bot", "bot-2"} {
			ctr := c.project + "_" + svc + "_1"
			if exec.Command("podman", "exec", ctr, "test", "-d", stage).Run() == nil {
				killed = ctr
			} else {
				survivor = ctr
			}
		}
		return killed != "" && survivor != ""
	})
	run(t, "podman", "kill", "--signal", "KILL", killed)
	if r := named("kilroy/ci/slow"); r.Status == "completed" {
		t.Fatalf("node slow completed before %s was killed: the test shows no takeover", killed)
	}
	t.Logf("run %s: killed %s in node slow; %s takes it over", id, killed, survivor)

	c.waitWithin(t, takeoverWait, fmt.Sprintf("every check on %.7s to complete after the kill", sha),
		func() bool { return allCompleted(checks()) },
		func() string {
			return "the checks:\n" + describe(checks()) + survivor + "'s log:\n" + logs(survivor, "100")
		})
	t.Logf("every check on %.7s completed; %s is %s", sha, killed,
		strings.TrimSpace(run(t, "podman", "inspect", "--format", "{{.State.Status}}", killed)))
	// One check each, of the one run: the takeover resumed it, and neither
	// started another run nor left a check of the dead replica's behind.
	var got []string
	for _, r := range checks() {
		got = append(got, r.Name+" "+r.ExternalID+" "+r.Status+"/"+r.Conclusion)
	}
	slices.Sort(got)
	if diff := gocmp.Diff(got, []string{"kilroy/ci " + id + " completed/success", "kilroy/ci/slow " + id + "/slow completed/success"}); diff != "" {
		t.Errorf("the check runs on %.7s (-got +want):\n%s", sha, diff)
	}
	if log := logs(survivor, ""); !strings.Contains(log, "rebuilt the run directory") {
		t.Errorf("%s did not rebuild the run directory of run %s; its log:\n%s", survivor, id, log)
	}
	branch := "kilroy/run/ci/" + id
	trail := repo.Git(t, "log", "--format=%s", sha+".."+branch)
	for _, node := range []string{"start", "build", "slow", "done"} {
		if n := strings.Count(trail, "): "+node+" ("); n != 1 {
			t.Errorf("node %s has %d checkpoints on %s, want 1:\n%s", node, n, branch, trail)
		}
	}
	c.down(t, "compose.yml", "compose.postgres.yml", "compose.replicas.yml")
}

// gateway creates the project's default network, as podman-compose would
// (with its labels; up then uses it), and returns its gateway: the host's
// address on that network, which the containers reach. With CNI the host
// has that address only while a container is on the network, so a
// container of image that sleeps stays on it until t ends.
func (c *composeTest) gateway(t *testing.T, image string) string {
	t.Helper()
	name, holder := c.project+"_default", c.project+"_gateway"
	run(t, "podman", "network", "create", "--label", "io.podman.compose.project="+c.project,
		"--label", "com.docker.compose.project="+c.project, name)
	t.Cleanup(func() { exec.Command("podman", "network", "rm", "-f", name).Run() })
	run(t, "podman", "run", "-d", "--rm", "--name", holder, "--network", name, "--entrypoint", "sleep", image, "infinity")
	t.Cleanup(func() { exec.Command("podman", "rm", "-f", "-t", "0", holder).Run() })
	gw := strings.TrimSpace(run(t, "podman", "network", "inspect", "--format", "{{range .Subnets}}{{.Gateway}} {{end}}", name))
	if ip := net.ParseIP(strings.Fields(gw + " -")[0]); ip != nil {
		return ip.String()
	}
	t.Fatalf("network %s has no gateway: %q", name, gw)
	return ""
}

// prOpened is the shared pull_request/opened payload edited to describe
// pull request 1 of repo on the fake, head sha, by alice.
func prOpened(t *testing.T, gh *ghapptest.Server, repo *ghapptest.Repo, sha string) []byte {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(ghapptest.LoadPayload(t, "pull_request/opened.payload.json"), &p); err != nil {
		t.Fatal(err)
	}
	alice := map[string]any{"login": "alice", "type": "User"}
	repoJSON := map[string]any{"id": 7001, "name": repo.Name, "full_name": repo.FullName(), "default_branch": "main",
		"owner": map[string]any{"login": repo.Owner, "type": "Organization"}, "clone_url": gh.CloneURL(repo.Owner, repo.Name)}
	p["repository"], p["sender"], p["number"] = repoJSON, alice, 1
	p["installation"] = map[string]any{"id": gh.InstallationID(repo.Owner)}
	pull := p["pull_request"].(map[string]any)
	pull["number"], pull["draft"], pull["user"] = 1, false, alice
	head, base := pull["head"].(map[string]any), pull["base"].(map[string]any)
	head["sha"], head["ref"], head["repo"] = sha, "feature-1", repoJSON
	base["ref"], base["repo"] = "main", repoJSON
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func allCompleted(runs []*ghapptest.CheckRun) bool {
	for _, r := range runs {
		if r.Status != "completed" {
			return false
		}
	}
	return len(runs) > 0
}

func describe(runs []*ghapptest.CheckRun) string {
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, "  %s %s %s/%s %q\n", r.Name, r.ExternalID, r.Status, r.Conclusion, r.Title)
	}
	return b.String()
}

// logs is a container's log, its last n lines unless n is "".
func logs(ctr, n string) string {
	args := []string{"logs"}
	if n != "" {
		args = append(args, "--tail", n)
	}
	out, _ := exec.Command("podman", append(args, ctr)...).CombinedOutput()
	return string(out)
}
