package webhook

import "strings"

func decodeIssueComment(payload []byte, appSlug string) (Event, error) {
	var p issueCommentPayload
	if err := unmarshal(payload, &p); err != nil {
		return Event{}, err
	}
	if p.Action != "created" {
		return Event{}, ignoredAction("issue_comment", p.Action)
	}
	issue, comment := p.Issue, p.Comment
	switch {
	case issue == nil:
		return Event{}, missing("issue_comment", "issue")
	case comment == nil:
		return Event{}, missing("issue_comment", "comment")
	case p.Repository == nil:
		return Event{}, missing("issue_comment", "repository")
	case issue.PullRequest == nil:
		return Event{}, ignore("comment is on an issue, not a pull request")
	}
	if p.Sender == nil {
		p.Sender = &comment.User
	}
	if byBot(p.Sender, comment, appSlug) {
		return Event{}, ignore("comment by a bot")
	}
	cmd, ok := ParseCommand(comment.Body)
	if !ok {
		return Event{}, ignore("comment does not start with a /kilroy command")
	}
	ev := p.base(KindCommentCommand)
	ev.PR = PullRequest{Number: issue.Number, AuthorLogin: issue.User.Login}
	ev.Command = cmd
	ev.CommentID = comment.ID
	ev.CommentedAt = comment.CreatedAt
	return ev, nil
}

// byBot reports whether a comment came from a bot or from this App, whose
// own replies must never be read back as commands. The App's own account is
// a bot ("<slug>[bot]"); a comment it posts on a user's behalf names it in
// performed_via_github_app.
func byBot(sender *ghUser, c *ghComment, appSlug string) bool {
	if sender.isBot() || c.User.isBot() {
		return true
	}
	return appSlug != "" && c.ViaGitHubApp != nil && strings.EqualFold(c.ViaGitHubApp.Slug, appSlug)
}
