package reporting

// ExportStore keeps generated export files while they are streamed.
type ExportStore interface{}
