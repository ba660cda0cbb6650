package dot

// attrLists parses zero or more `[..]` lists and concatenates them, as
// Graphviz does for `a [x=1] [y=2]`.
func (p *parser) attrLists() ([]Attr, error) {
	var attrs []Attr
	for p.tok.kind == tLBrack {
		var err error
		if attrs, err = p.attrList(attrs); err != nil {
			return nil, err
		}
	}
	return attrs, nil
}

// attrList parses one `[k=v, ...]` list, appending to attrs. Attributes
// are separated by ",", ";" or whitespace alone, as Graphviz's grammar
// allows (`[shape=box label="Fix"]` is common in hand-written pipelines),
// and a trailing separator is fine.
func (p *parser) attrList(attrs []Attr) ([]Attr, error) {
	if err := p.next(); err != nil { // "["
		return nil, err
	}
	for p.tok.kind != tRBrack {
		a, err := p.attr()
		if err != nil {
			return nil, err
		}
		if attrs == nil {
			attrs = make([]Attr, 0, 4) // most lists hold a few; saves regrowth
		}
		attrs = append(attrs, a)
		switch p.tok.kind {
		case tComma, tSemi:
			if err := p.next(); err != nil {
				return nil, err
			}
		case tRBrack, tIdent, tString:
			// A key follows after whitespace (a quoted one is reported
			// by attr).
		default:
			return nil, p.unexpected("%q or %q after attribute", "]", ",")
		}
	}
	return attrs, p.next()
}

// attr parses `key = value` inside a list.
func (p *parser) attr() (Attr, error) {
	key := p.tok
	switch key.kind {
	case tIdent:
	case tString:
		return Attr{}, errorf(key.pos, "quoted attribute key %s: keys are bare identifiers like label or retry.backoff", excerpt(key.raw))
	default:
		return Attr{}, p.unexpected("an attribute key or %q", "]")
	}
	if err := p.next(); err != nil {
		return Attr{}, err
	}
	if p.tok.kind != tEq {
		return Attr{}, p.unexpected("%q after attribute key %q", "=", key.raw)
	}
	return p.attrValue(key)
}

// attrValue parses the value after "=" (the current token) for key.
func (p *parser) attrValue(key token) (Attr, error) {
	if err := p.next(); err != nil {
		return Attr{}, err
	}
	v := p.tok
	if v.kind != tValue {
		return Attr{}, errorf(v.pos, "expected a value after %q, found %s; write %s=\"\" for an empty value", key.raw+"=", describe(v), key.raw)
	}
	a := Attr{Key: key.raw, KeyPos: key.pos, Value: Value{Kind: v.vkind, Text: v.text, Raw: v.raw, Pos: v.pos}}
	return a, p.next()
}
