package runs

import (
	"fmt"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
	"github.com/kilroy-bot/kilroy-bot/server"
)

// onePipeline is the one-node pipeline every run runs.
const onePipeline = `digraph ci {
  start [shape=Mdiamond]
  exit [shape=Msquare]
  t [shape=parallelogram, tool_command="true"]
  start -> t -> exit
}
`

// benchRepos are the repositories the runs go round: two installations
// (owners) of two repositories each, so the fair scheduler has more than
// one of each to choose between.
var benchRepos = [][2]string{{"acme", "api"}, {"acme", "web"}, {"globex", "core"}, {"globex", "docs"}}

// author is the pull requests' author, a writer of every repository.
const author = "alice"

// pull is one pull request to run: its event, and the key its run's end
// is reported under.
type pull struct {
	key string
	ev  server.Event
}

// seedPulls gives every repository a main branch with the pipeline and
// opens n pull requests round-robin, each with a head commit of its own;
// pull i is the i-th to deliver.
func seedPulls(b *testing.B, gh *ghapptest.Server, n int) []pull {
	b.Helper()
	repos := make([]*ghapptest.Repo, len(benchRepos))
	for i, r := range benchRepos {
		repos[i] = gh.AddRepo(r[0], r[1])
		repos[i].Commit(b, "main", map[string]string{".kilroy/ci.dot": onePipeline, "README.md": "bench\n"}, "initial")
		gh.SetPermission(r[0], r[1], author, "write")
	}
	pulls := make([]pull, n)
	for i := range n {
		r, num := benchRepos[i%len(benchRepos)], i/len(benchRepos)+1
		branch := fmt.Sprintf("feature-%d", num)
		sha := repos[i%len(benchRepos)].Commit(b, branch, map[string]string{"change.txt": fmt.Sprintf("pull %d\n", num)}, "change")
		gh.PutPull(r[0], r[1], ghapptest.Pull{Number: num, HeadSHA: sha, Author: author, Files: []string{"change.txt"}})
		full := r[0] + "/" + r[1]
		pulls[i] = pull{key: prKey(full, num), ev: server.Event{
			Kind: server.KindPullRequest, Action: "opened", InstallationID: gh.InstallationID(r[0]),
			Repo: server.Repo{Owner: r[0], Name: r[1], FullName: full, CloneURL: gh.CloneURL(r[0], r[1]), DefaultBranch: "main"},
			PR: server.PullRequest{Number: num, HeadSHA: sha, HeadRepoFullName: full, BaseRef: "main",
				AuthorLogin: author},
			Sender: server.Actor{Login: author, Type: "User"},
		}}
	}
	return pulls
}
