package run

import "container/list"

// counts are the run's calls as the loop guard counts them, for a call of
// tool in group g.
func (r *memRun) counts(g *group, tool string) Counts {
	return Counts{Total: r.total, Tool: r.perTool[tool], Identical: g.calls, IdenticalFailed: g.failed, Final: g.final}
}

// count moves the counts of entry e of group g from status from to
// status to. A fallback's alternative counts as part of its call: not at
// all.
func (r *memRun) count(g *group, e Entry, from, to Status) {
	if e.Alternative {
		return
	}
	d := b2i(counted(to)) - b2i(counted(from))
	r.total += d
	r.perTool[e.Tool] += d
	if r.perTool[e.Tool] == 0 {
		delete(r.perTool, e.Tool)
	}
	g.calls += d
	g.failed += b2i(failed(to)) - b2i(failed(from))
}

// own is what Begin answers a call that finds its own intent me, Pending
// under its Claim (its earlier Begin got no answer): a new call, counted
// once, with the counts before it.
func (r *memRun) own(g *group, me *memEntry) Begun {
	b := Begun{Entry: me.e, New: true, Counts: r.counts(g, me.e.Tool)}
	if !me.e.Alternative { // an alternative is not counted: nothing to take back
		b.Counts.Total--
		b.Counts.Tool--
		b.Counts.Identical--
	}
	return b
}

// place keeps me in the list its status belongs to: drop (dropped first)
// or keep, each oldest first.
func (r *memRun) place(me *memEntry) {
	switch d := droppable(me.e); {
	case d && !me.inDrop:
		r.keep.Remove(me.el)
		me.el, me.inDrop = insertBySeq(&r.drop, me), true
	case !d && me.inDrop:
		r.drop.Remove(me.el)
		me.el, me.inDrop = insertBySeq(&r.keep, me), false
	}
}

// insertBySeq inserts me into li, whose entries are in the order they
// were recorded, in its place: usually the back.
func insertBySeq(li *list.List, me *memEntry) *list.Element {
	for el := li.Back(); el != nil; el = el.Prev() {
		if el.Value.(*memEntry).seq < me.seq {
			return li.InsertAfter(me, el)
		}
	}
	return li.PushFront(me)
}

// add records the new entry e, Pending, in group g.
func (r *memRun) add(g *group, e Entry) {
	r.seq++
	me := &memEntry{e: e, g: g, seq: r.seq}
	if droppable(e) {
		me.el, me.inDrop = r.drop.PushBack(me), true
	} else {
		me.el = r.keep.PushBack(me)
	}
	g.put(e.N, me)
	g.next = e.N + 1
	r.count(g, e, StatusOpen, StatusPending)
}

// at returns the entry at position p, or nil.
func (g *group) at(p int) *memEntry {
	if i := p - g.base; i >= 0 && i < len(g.recs) {
		return g.recs[i]
	}
	return nil
}

// put keeps me at position p, at or after every position kept.
func (g *group) put(p int, me *memEntry) {
	if len(g.recs) == 0 {
		g.base, g.recs = p, g.recs[:0]
	}
	for g.base+len(g.recs) < p {
		g.recs = append(g.recs, nil)
	}
	g.recs = append(g.recs, me)
	g.kept++
}

// remove forgets the entry at position p.
func (g *group) remove(p int) {
	i := p - g.base
	if i < 0 || i >= len(g.recs) || g.recs[i] == nil {
		return
	}
	g.recs[i] = nil
	g.kept--
	for len(g.recs) > 0 && g.recs[0] == nil {
		g.recs = g.recs[1:]
		g.base++
	}
	for len(g.recs) > 0 && g.recs[len(g.recs)-1] == nil {
		g.recs = g.recs[:len(g.recs)-1]
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
