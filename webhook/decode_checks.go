package webhook

import (
	"fmt"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/server"
)

// Identifiers of the requested actions (buttons) on kilroy's check runs.
const (
	ActionRerun  = "rerun"
	ActionCancel = "cancel"
)

func decodeCheckRun(payload []byte, appID int64) (Event, error) {
	var p checkRunPayload
	if err := unmarshal(payload, &p); err != nil {
		return Event{}, err
	}
	var requested string
	if p.RequestedAction != nil {
		requested = p.RequestedAction.Identifier
	}
	kind, err := checkRunKind(p.Action, requested)
	if err != nil {
		return Event{}, err
	}
	run := p.CheckRun
	switch {
	case run == nil:
		return Event{}, missing("check_run", "check_run")
	case run.HeadSHA == "":
		return Event{}, missing("check_run", "check_run.head_sha")
	case otherApp(run.App, appID):
		return Event{}, ignore("check run belongs to another app")
	}
	ev := p.base(kind)
	ev.CheckRun = CheckRun{
		ID:              run.ID,
		Name:            run.Name,
		HeadSHA:         run.HeadSHA,
		ExternalID:      run.ExternalID,
		RequestedAction: requested,
	}
	ev.CheckSuite = run.CheckSuite.suite()
	ev.PullNumbers = pullNumbers(run.PullRequests)
	return ev, nil
}

// checkRunKind maps a check_run action, and the identifier of a requested
// action's button, to a Kind.
func checkRunKind(action, requested string) (Kind, error) {
	switch {
	case action == "rerequested":
		return KindRerun, nil
	case action != "requested_action":
		return "", ignoredAction("check_run", action)
	case requested == ActionRerun:
		return KindRerun, nil
	case requested == ActionCancel:
		return KindCancel, nil
	default:
		return "", ignore(fmt.Sprintf("requested action %q is not one of kilroy's", requested))
	}
}

func decodeCheckSuite(payload []byte, appID int64) (Event, error) {
	var p checkSuitePayload
	if err := unmarshal(payload, &p); err != nil {
		return Event{}, err
	}
	if p.Action != "rerequested" {
		return Event{}, ignoredAction("check_suite", p.Action)
	}
	suite := p.CheckSuite
	switch {
	case suite == nil:
		return Event{}, missing("check_suite", "check_suite")
	case suite.HeadSHA == "":
		return Event{}, missing("check_suite", "check_suite.head_sha")
	case otherApp(suite.App, appID):
		return Event{}, ignore("check suite belongs to another app")
	}
	ev := p.base(KindRerun)
	ev.CheckSuite = suite.suite()
	ev.PullNumbers = pullNumbers(suite.PullRequests)
	return ev, nil
}

// otherApp reports whether a check run or suite names an App other than
// ours, when ours is configured.
func otherApp(app *ghApp, ours int64) bool {
	return ours != 0 && app != nil && app.ID != 0 && app.ID != ours
}

// suite is the event's check suite; its branch only when it is a merge
// queue's, which makes a re-run there a merge group's.
func (s *ghCheckSuite) suite() CheckSuite {
	cs := CheckSuite{ID: s.ID, HeadSHA: s.HeadSHA}
	if strings.HasPrefix(s.HeadBranch, server.QueuePrefix) {
		cs.QueueBranch = s.HeadBranch
	}
	return cs
}
