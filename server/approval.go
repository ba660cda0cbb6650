package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/queue"
)

// The approval of an untrusted pull request. A writer's `/kilroy run`
// approves the head they looked at, which is the head that was current
// when they wrote the comment, not whatever was pushed by the time the bot
// reads it. The bot knows when it heard of each head (the queue's record
// of pull request heads: a head is never recorded before its push), and
// GitHub says when the comment was written. The head current at the
// comment is the last one heard of at or before that time; if that is not
// the head now, a push came after the comment (or the bot cannot tell),
// and nothing runs until a writer approves again. `/kilroy run SHA`
// approves exactly one commit instead, as long as it is still the head:
// a full 40-hex SHA whenever it was pushed, or a prefix resolved to the
// one head of the pull request heard of at or before the comment. A
// prefix is not a name: grinding a commit that shares a reviewed commit's
// first seven digits takes a fraction of a second, so a push after the
// comment never inherits its approval. A prefix that matches no such head,
// or several, runs nothing and gets a reply asking for the full SHA.

// approval is the verdict on which commit a `/kilroy run` may run.
type approval struct {
	ok bool
	// atComment is the head current when the comment was written, as far
	// as the bot knows ("" when it knows of none): for the reply.
	atComment string
	// named is the commit a `/kilroy run SHA` approves, resolved; matches
	// are the heads its prefix matched when it resolves to none or to
	// several ("" and nil for a full SHA).
	named   string
	matches []string
}

// fullSHALen is the length of a full commit id in hex (SHA-1).
const fullSHALen = 40

// approve decides whether a `/kilroy run` (naming sha, or "") approves
// head. Only an untrusted pull request's command is held to the comment's
// time; a named commit must always be the head.
func approve(sha, head string, untrusted bool, commentedAt time.Time, heads []queue.SeenHead) approval {
	if sha != "" {
		named, matches := resolveNamed(sha, commentedAt, heads)
		return approval{ok: named != "" && named == head, named: named, matches: matches}
	}
	if !untrusted {
		return approval{ok: true}
	}
	at := headAt(heads, commentedAt)
	return approval{ok: at != "" && at == head, atComment: at}
}

// resolveNamed resolves the commit of `/kilroy run SHA`: a full SHA is
// itself; a prefix is the one head heard of at or before the comment that
// starts with it. Otherwise named is "" and matches lists the distinct
// heads it matched (none: unknown; several: ambiguous).
func resolveNamed(sha string, commentedAt time.Time, heads []queue.SeenHead) (named string, matches []string) {
	if len(sha) == fullSHALen {
		return sha, nil
	}
	for _, h := range heads {
		if commentedAt.IsZero() || h.SeenAt.After(commentedAt) || !strings.HasPrefix(h.SHA, sha) || slices.Contains(matches, h.SHA) {
			continue
		}
		matches = append(matches, h.SHA)
	}
	if len(matches) == 1 {
		return matches[0], nil
	}
	return "", matches
}

// headAt is the last head heard of at or before t; "" when none was, or t
// is unknown (zero). GitHub's times are whole seconds, so a head heard of
// within the comment's second counts as after it: the bot cannot tell.
func headAt(heads []queue.SeenHead, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	at, last := "", time.Time{}
	for _, h := range heads {
		if !h.SeenAt.After(t) && !h.SeenAt.Before(last) {
			at, last = h.SHA, h.SeenAt
		}
	}
	return at
}

// approvedHead checks a `/kilroy run` against the pull request's head and
// replies when it does not approve it; ok says whether to go on.
func (w *eventWork) approvedHead(ctx context.Context, pr PullRequest, untrusted bool) (ok bool, err error) {
	var heads []queue.SeenHead
	sha := w.ev.Command.SHA
	if untrusted && sha == "" || sha != "" && len(sha) < fullSHALen {
		if heads, err = w.s.o.Queue.HeadsOfPR(ctx, w.ev.Repo.FullName, pr.Number); err != nil {
			return false, err
		}
	}
	v := approve(sha, pr.HeadSHA, untrusted, w.ev.CommentedAt, heads)
	if v.ok {
		return true, nil
	}
	w.log.Info("event: command does not approve the head", "head", pr.HeadSHA, "named", sha, "resolved", v.named, "at_comment", v.atComment)
	if sha != "" && v.named == "" {
		return false, w.reply(ctx, unresolvedReply(w.ev.Sender.Login, sha, pr.HeadSHA, v.matches))
	}
	return false, w.reply(ctx, notApprovedReply(w.ev.Sender.Login, v.named, pr.HeadSHA, v.atComment))
}

// unresolvedReply explains a `/kilroy run SHA` whose prefix named no
// commit of the pull request at the comment's time, or several.
func unresolvedReply(sender, prefix, head string, matches []string) string {
	again := fmt.Sprintf("Review the head, then comment `/kilroy run %s` (the full SHA) to run exactly that commit.", head)
	if len(matches) == 0 {
		return fmt.Sprintf("Nothing ran: `%s` is not the start of a commit this pull request had when @%s commented. %s", prefix, sender, again)
	}
	return fmt.Sprintf("Nothing ran: `%s` is the start of more than one commit this pull request had when @%s commented (%s). %s",
		prefix, sender, codeList(matches), again)
}

// notApprovedReply explains why nothing ran and how to approve the head.
func notApprovedReply(sender, named, head, atComment string) string {
	again := fmt.Sprintf("Review it, then comment `/kilroy run %s` to run exactly that commit.", head)
	switch {
	case named != "":
		return fmt.Sprintf("Nothing ran: `%s` is not the head of this pull request; its head is `%s`. %s", named, head, again)
	case atComment == "":
		return fmt.Sprintf("Nothing ran: kilroy cannot tell which commit was this pull request's head when @%s commented "+
			"(it heard of none before the comment). The head is now `%s`. %s", sender, head, again)
	default:
		return fmt.Sprintf("Nothing ran: the head of this pull request changed after @%s's comment: it was `%s` when you commented "+
			"and is now `%s`. %s", sender, atComment, head, again)
	}
}
