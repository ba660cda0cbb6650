package queue

import (
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/oklog/ulid/v2"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Trigger says what asked for a run.
type Trigger string

// Triggers of a run.
const (
	TriggerPullRequest Trigger = "pull_request"
	TriggerComment     Trigger = "comment"
	TriggerRerun       Trigger = "rerun"
	// TriggerMergeGroup: the merge queue asked for checks on a merge
	// group; PR is the pull request the group was made for.
	TriggerMergeGroup Trigger = "merge_group"
)

// RunArgs are the arguments of one pipeline run job. The fields tagged
// river:"unique" are the run's identity: two jobs with the same repository,
// pull request, head SHA and pipeline coalesce while the first is unfinished.
type RunArgs struct {
	InstallationID int64   `json:"installation_id"`
	Repo           string  `json:"repo" river:"unique"` // owner/name
	CloneURL       string  `json:"clone_url"`
	PR             int     `json:"pr" river:"unique"`
	HeadSHA        string  `json:"head_sha" river:"unique"`
	BaseRef        string  `json:"base_ref"`
	Pipeline       string  `json:"pipeline" river:"unique"`
	Trigger        Trigger `json:"trigger"`
	RequestedBy    string  `json:"requested_by,omitempty"`
	// ConfigFromBase runs the pipelines and config of the base branch, as
	// for a fork PR approved by a `/kilroy run` comment.
	ConfigFromBase bool `json:"config_from_base,omitempty"`
	// Notes are what the run's summary check says besides the run itself
	// (the run used the base branch's pipelines although the pull request
	// changes them); kept with the job so the run's reporter shows them.
	Notes []string `json:"notes,omitempty"`
	// RunID is a ULID; EnqueueDelivery assigns one when it is empty.
	RunID string `json:"run_id"`
	// FromRun is the failed run this one resumes from the checkpoint before
	// its failed node ("Re-run from failure"); empty for a run that starts
	// from the beginning.
	FromRun string `json:"from_run,omitempty"`
}

// Kind is the River job kind of a run.
func (RunArgs) Kind() string { return "kilroy.run" }

// InsertOpts makes every run job unique by its identity while unfinished and
// attempted once: handler errors are final, interruptions are resumed by the
// queue's own reclaim (see the package comment). Run jobs are inserted
// pending (insertOptsOf): the scheduler makes them available (sched.go).
func (RunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		MaxAttempts: 1,
		Queue:       queueName,
		UniqueOpts: river.UniqueOpts{
			ByArgs: true,
			// Completed is left out so that a re-run of a finished SHA is a
			// new job rather than a duplicate of the old one.
			ByState: []rivertype.JobState{
				rivertype.JobStateAvailable,
				rivertype.JobStatePending,
				rivertype.JobStateScheduled,
				rivertype.JobStateRunning,
				rivertype.JobStateRetryable,
			},
		},
	}
}

func (a RunArgs) validate() error {
	var errs []error
	if a.Repo == "" {
		errs = append(errs, errors.New("empty repo"))
	}
	if a.PR <= 0 {
		errs = append(errs, fmt.Errorf("pr %d is not positive", a.PR))
	}
	if a.HeadSHA == "" {
		errs = append(errs, errors.New("empty head sha"))
	}
	if a.Pipeline == "" {
		errs = append(errs, errors.New("empty pipeline"))
	}
	switch a.Trigger {
	case TriggerPullRequest, TriggerComment, TriggerRerun, TriggerMergeGroup:
	default:
		errs = append(errs, fmt.Errorf("unknown trigger %q", a.Trigger))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("run args %s#%d %s: %w", a.Repo, a.PR, a.Pipeline, err)
	}
	return nil
}

// NewRunID returns a new run id: a ULID, so ids sort by creation time.
func NewRunID() string {
	return ulid.MustNew(ulid.Now(), rand.Reader).String()
}
