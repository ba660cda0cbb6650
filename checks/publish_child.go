package checks

import "github.com/kilroy-bot/kilroy-bot/attractor"

// lateVerify gives a verify node that the pipeline did not declare its own
// check, kilroy/<pipeline>/<node>, when it first starts: the nodes of a
// manager loop's child pipeline, which the engine runs as <house>/<child>
// and which exist only once the house loads its child. The check is
// created with the next update.
func (p *Publisher) lateVerify(n *attractor.Node) {
	if n == nil || !isVerifyNode(n) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.verify[n.ID] != nil || p.gate != nil {
		return
	}
	v := p.rec.View()
	r := p.opts.Render.Redactor
	c := &check{node: n.ID, name: r.Redact("kilroy/" + v.Pipeline + "/" + n.ID), externalID: r.Redact(v.RunID + "/" + n.ID)}
	p.verify[n.ID] = c
	p.checks = append(p.checks, c)
}
