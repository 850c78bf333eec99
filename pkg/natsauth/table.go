// Package natsauth is who may do what on NATS: the one permission table of
// the platform's NATS users (the gateway and each service, one NKEY each),
// their keys, and the signed principal that travels with every request.
//
// NATS permissions fence the transport: a service's key may publish only to
// the subjects it serves replies on and the ones it calls, and subscribe
// only to its own. The signed principal fences the application: a service
// acts only for a principal the gateway (or, for its own work, a peer
// service) signed with its NKEY.
package natsauth

import (
	"slices"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/contracts/reportingv1"
)

// Gateway is the name of the gateway's NATS user and signer.
const Gateway = "gateway"

// Permissions are the subjects one user may publish and subscribe to; Deny
// takes subjects out of what Publish allows.
type Permissions struct {
	Publish     []string
	PublishDeny []string
	Subscribe   []string
}

// internal are the subjects services call on each other; the gateway never
// sends them.
var internal = []string{
	ledgerv1.SubjectSetPeriodLock, ledgerv1.SubjectReviewCreate, ledgerv1.SubjectPost, ledgerv1.SubjectJournalFeed, ledgerv1.SubjectAccountGet,
	periodsv1.SubjectStatus, reportingv1.SubjectRebuild,
}

// common is what every user needs: replies to the requests it serves (to
// any inbox), its own inboxes, and the JetStream API of the streams it owns
// (create, update, read) and consumes (its consumers, their messages and
// acks) – not of anyone else's.
func common(name string, owns, consumes, pub, sub []string) Permissions {
	p := Permissions{
		Publish:   append([]string{"_INBOX.>", "$JS.API.INFO"}, pub...),
		Subscribe: append([]string{InboxPrefix(name) + ".>"}, sub...),
	}
	for _, s := range owns {
		p.Publish = append(p.Publish, "$JS.API.STREAM.CREATE."+s, "$JS.API.STREAM.UPDATE."+s)
	}
	for _, s := range append(slices.Clone(owns), consumes...) {
		p.Publish = append(p.Publish, "$JS.API.STREAM.INFO."+s,
			"$JS.API.CONSUMER.*."+s, "$JS.API.CONSUMER.*."+s+".>",
			"$JS.API.CONSUMER.DURABLE.CREATE."+s+".>", "$JS.API.CONSUMER.MSG.NEXT."+s+".>",
			"$JS.ACK."+s+".>")
	}
	return p
}

// service is a service: it serves its subjects through micro ($SRV),
// publishes its events, calls its peers and pings itself (the container's
// health probe logs in with the service's key).
func service(name string, owns, consumes, events []string, calls ...string) Permissions {
	pub := append(append(slices.Clone(events), calls...), "$SRV.PING."+name)
	return common(name, owns, consumes, pub, []string{name + ".v1.>", "$SRV.>"})
}

// Table is the permission table: the gateway and every service.
var Table = map[string]Permissions{
	Gateway: func() Permissions {
		p := common(Gateway, []string{gatewayv1.StreamCalls}, nil, []string{
			"identity.v1.>", "ledger.v1.>", "periods.v1.>", "reporting.v1.>", "bank.v1.>", "receivables.v1.>", "payables.v1.>", gatewayv1.CallsFilter,
			// Readiness: authentication fails closed when identity is gone.
			"$SRV.PING." + identityv1.ServiceName,
		}, []string{identityv1.EventsFilter})
		p.PublishDeny = slices.Clone(internal)
		p.Publish = append(p.Publish, uploadsWrite...)
		return p
	}(),
	"identity": service("identity", []string{identityv1.StreamEvents, identityv1.StreamMail}, []string{gatewayv1.StreamCalls},
		[]string{identityv1.EventsFilter, identityv1.MailFilter}),
	"ledger": service("ledger", []string{ledgerv1.StreamEvents}, []string{identityv1.StreamEvents},
		[]string{ledgerv1.EventsFilter}),
	"periods": service("periods", []string{periodsv1.StreamEvents}, []string{ledgerv1.StreamEvents},
		[]string{periodsv1.EventsFilter},
		ledgerv1.SubjectSetPeriodLock, ledgerv1.SubjectReviewCount, identityv1.SubjectTenantGet,
		bankv1.SubjectPeriodStatus),
	"reporting": service("reporting", []string{reportingv1.StreamJobs}, []string{ledgerv1.StreamEvents},
		[]string{reportingv1.JobsFilter},
		ledgerv1.SubjectJournalFeed, ledgerv1.SubjectAccountsList, ledgerv1.SubjectTaxCodesList, ledgerv1.SubjectJournalVerify,
		ledgerv1.SubjectJournalCheckpoints,
		identityv1.SubjectTenantGet, periodsv1.SubjectStatus),
	"bank": service("bank", []string{bankv1.StreamEvents}, []string{ledgerv1.StreamEvents},
		[]string{bankv1.EventsFilter}, ledgerv1.SubjectPost, ledgerv1.SubjectReviewCreate, ledgerv1.SubjectAccountGet,
		ledgerv1.SubjectJournalReverse, ledgerv1.SubjectAccountBalance),
	receivablesv1.ServiceName: service(receivablesv1.ServiceName, []string{receivablesv1.StreamEvents}, []string{bankv1.StreamEvents},
		[]string{receivablesv1.EventsFilter}, ledgerv1.SubjectAccountGet,
		// Issuing sales invoices: the tax codes, the PDF as a document,
		// the receivable's posting and the seller's master data.
		ledgerv1.SubjectTaxCodesList, ledgerv1.SubjectDocumentsUpload, ledgerv1.SubjectPost, identityv1.SubjectTenantGet,
		// Cancelling one: the reversal of its receivable (and which
		// reversal stands, when the ledger says it was reversed before).
		ledgerv1.SubjectJournalReverse, ledgerv1.SubjectJournalGet),
	payablesv1.ServiceName: service(payablesv1.ServiceName, []string{payablesv1.StreamEvents, payablesv1.StreamExtract}, []string{bankv1.StreamEvents},
		// Its events, its extraction work queue (which it owns and
		// consumes) and the wake-up of a request waiting for an extraction.
		[]string{payablesv1.EventsFilter, payablesv1.ExtractFilter, payablesv1.ExtractedFilter}, ledgerv1.SubjectAccountGet,
		// The inbox: its documents are the ledger's, and extraction
		// reads their bytes.
		ledgerv1.SubjectDocumentsUpload, ledgerv1.SubjectDocumentsFile,
		// Approving a review case posts its incoming invoice.
		ledgerv1.SubjectPost,
		// Payment runs: the bank account paid from and the company
		// holding it.
		bankv1.SubjectAccountsGet, identityv1.SubjectTenantGet),
}

// The uploads bucket (gatewayv1.UploadsBucket, JetStream stream
// OBJ_UPLOADS): the gateway creates it and puts files in; the bank reads
// and deletes them (a delete writes a meta message and purges the chunks),
// and so does payables.
var (
	uploadsStream = "OBJ_" + gatewayv1.UploadsBucket
	uploadsRead   = []string{"$JS.API.STREAM.INFO." + uploadsStream, "$JS.API.DIRECT.GET." + uploadsStream + ".>",
		"$JS.API.STREAM.MSG.GET." + uploadsStream, "$JS.API.CONSUMER.*." + uploadsStream, "$JS.API.CONSUMER.*." + uploadsStream + ".>",
		"$JS.API.CONSUMER.MSG.NEXT." + uploadsStream + ".>",
		"$JS.FC." + uploadsStream + ".>"}
	uploadsDelete = []string{"$O." + gatewayv1.UploadsBucket + ".M.>", "$JS.API.STREAM.PURGE." + uploadsStream}
	uploadsWrite  = append(append([]string{"$JS.API.STREAM.CREATE." + uploadsStream, "$JS.API.STREAM.UPDATE." + uploadsStream,
		"$O." + gatewayv1.UploadsBucket + ".C.>"}, uploadsRead...), uploadsDelete...)
)

func init() {
	b := Table["bank"]
	b.Publish = append(append(b.Publish, uploadsRead...), uploadsDelete...)
	// The statement import work queue, which the bank owns and consumes.
	for _, s := range common("bank", []string{bankv1.StreamImports}, nil, []string{bankv1.ImportsFilter}, nil).Publish {
		if !slices.Contains(b.Publish, s) {
			b.Publish = append(b.Publish, s)
		}
	}
	Table["bank"] = b
	// The inbound-email webhook's messages come through the bucket too.
	p := Table[payablesv1.ServiceName]
	p.Publish = append(append(p.Publish, uploadsRead...), uploadsDelete...)
	Table[payablesv1.ServiceName] = p
}

// Names lists the users of Table, sorted.
func Names() []string {
	out := make([]string, 0, len(Table))
	for n := range Table {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// InboxPrefix is the inbox prefix of a user's connection, so that no user
// can subscribe to another's replies.
func InboxPrefix(name string) string { return "_INBOX." + name }
