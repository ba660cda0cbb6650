package webhook

// The payload types below mirror only the fields of GitHub's webhook payloads
// that the webhook reads, under GitHub's JSON names. Decoding stays strict
// about those fields (a wrong type is a 400) and blind to everything else, so
// a field we never use, in a shape we did not expect, cannot fail a delivery.
// (go-github's full payload types do fail that way: its check_run example
// carries app timestamps "2018-04-25 20:42:10" that its Timestamp rejects.)

import "time"

// envelope holds the fields most payloads share.
type envelope struct {
	Action       string          `json:"action"`
	Repository   *ghRepo         `json:"repository"`
	Installation *ghInstallation `json:"installation"`
	Sender       *ghUser         `json:"sender"`
}

type ghUser struct {
	ID    int64  `json:"id"`
	Login string `json:"login"`
	Type  string `json:"type"`
}

type ghRepo struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	FullName      string `json:"full_name"`
	Owner         ghUser `json:"owner"`
	CloneURL      string `json:"clone_url"`
	DefaultBranch string `json:"default_branch"`
}

type ghInstallation struct {
	ID      int64  `json:"id"`
	AppID   int64  `json:"app_id"`
	Account ghUser `json:"account"`
}

type ghApp struct {
	ID   int64  `json:"id"`
	Slug string `json:"slug"`
}

type pullRequestPayload struct {
	envelope
	PullRequest *ghPull `json:"pull_request"`
}

type ghPull struct {
	Number int      `json:"number"`
	Draft  bool     `json:"draft"`
	User   ghUser   `json:"user"`
	Head   ghBranch `json:"head"`
	Base   ghBranch `json:"base"`
}

type ghBranch struct {
	Ref  string  `json:"ref"`
	SHA  string  `json:"sha"`
	Repo *ghRepo `json:"repo"` // null when the head's fork was deleted
}

type issueCommentPayload struct {
	envelope
	Issue   *ghIssue   `json:"issue"`
	Comment *ghComment `json:"comment"`
}

type ghIssue struct {
	Number int    `json:"number"`
	User   ghUser `json:"user"`
	// PullRequest is present only when the issue is a pull request.
	PullRequest *struct {
		URL string `json:"url"`
	} `json:"pull_request"`
}

type ghComment struct {
	ID           int64     `json:"id"`
	Body         string    `json:"body"`
	User         ghUser    `json:"user"`
	ViaGitHubApp *ghApp    `json:"performed_via_github_app"`
	CreatedAt    time.Time `json:"created_at"`
}

type checkRunPayload struct {
	envelope
	CheckRun        *ghCheckRun `json:"check_run"`
	RequestedAction *struct {
		Identifier string `json:"identifier"`
	} `json:"requested_action"`
}

type ghCheckRun struct {
	ID           int64        `json:"id"`
	Name         string       `json:"name"`
	HeadSHA      string       `json:"head_sha"`
	ExternalID   string       `json:"external_id"`
	App          *ghApp       `json:"app"`
	CheckSuite   ghCheckSuite `json:"check_suite"`
	PullRequests []ghPullRef  `json:"pull_requests"`
}

type checkSuitePayload struct {
	envelope
	CheckSuite *ghCheckSuite `json:"check_suite"`
}

type ghCheckSuite struct {
	ID           int64       `json:"id"`
	HeadSHA      string      `json:"head_sha"`
	HeadBranch   string      `json:"head_branch"`
	App          *ghApp      `json:"app"`
	PullRequests []ghPullRef `json:"pull_requests"`
}

type ghPullRef struct {
	Number int `json:"number"`
}

// installationPayload serves both installation and installation_repositories.
type installationPayload struct {
	envelope
	Repositories        []ghRepoName `json:"repositories"`
	RepositoriesAdded   []ghRepoName `json:"repositories_added"`
	RepositoriesRemoved []ghRepoName `json:"repositories_removed"`
}

type ghRepoName struct {
	FullName string `json:"full_name"`
}

type pingPayload struct {
	envelope
	HookID int64 `json:"hook_id"`
}

type mergeGroupPayload struct {
	envelope
	MergeGroup *ghMergeGroup `json:"merge_group"`
	// Reason is why a group was destroyed: merged, dequeued, invalidated.
	Reason string `json:"reason"`
}

type ghMergeGroup struct {
	HeadSHA string `json:"head_sha"`
	HeadRef string `json:"head_ref"`
	BaseSHA string `json:"base_sha"`
	BaseRef string `json:"base_ref"`
}
