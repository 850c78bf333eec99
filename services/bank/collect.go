package bank

// Collector is a Sink that keeps a parsed file's statements for
// Store.ImportStatements, which writes them in one transaction. It holds
// the whole file's entries; a file import that must stay within a memory
// bound imports statement by statement instead (Flush on End).
type Collector struct {
	Statements []ParsedStatement
	// Flush, when set, is called with each complete statement instead of
	// keeping it.
	Flush func(ParsedStatement) error
	cur   *ParsedStatement
}

// Statement implements Sink.
func (c *Collector) Statement(s Statement) error {
	c.cur = &ParsedStatement{Statement: s}
	return nil
}

// Entry implements Sink.
func (c *Collector) Entry(e Entry) error {
	if c.cur == nil {
		c.cur = &ParsedStatement{}
	}
	c.cur.Entries = append(c.cur.Entries, e)
	return nil
}

// End implements Sink.
func (c *Collector) End(end StatementEnd) error {
	if c.cur == nil {
		c.cur = &ParsedStatement{}
	}
	st := *c.cur
	st.End, c.cur = end, nil
	if c.Flush != nil {
		return c.Flush(st)
	}
	c.Statements = append(c.Statements, st)
	return nil
}
