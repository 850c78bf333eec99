package gatewayv1

// UploadsBucket is the JetStream Object Store bucket the gateway puts large
// uploads into (routes flagged LargeUpload): NATS carries at most 16 MB a
// message, a statement file may have 50 MB. The gateway owns the bucket;
// the service the upload is for reads the object and deletes it, and the
// bucket's TTL removes what nobody collected.
const UploadsBucket = "UPLOADS"

// UploadRef names one uploaded file in the bucket. The gateway computed Size
// and SHA256 while streaming the file into the bucket.
type UploadRef struct {
	Bucket      string `json:"bucket"`
	Name        string `json:"name"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
	FileName    string `json:"file_name"`
	ContentType string `json:"content_type"`
}

// UploadRequest is the body the gateway sends for a LargeUpload route in
// place of the multipart form: the file part as an object in the bucket,
// the text fields as they came.
type UploadRequest struct {
	Field  string            `json:"field"` // the form field of the file
	Upload UploadRef         `json:"upload"`
	Fields map[string]string `json:"fields,omitempty"`
}
