// Package payablesd declares the payables service for the daemon: its
// schema, the stream it owns and its route table.
package payablesd

import (
	"context"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/uploads"
	"github.com/ledgerplatform/ledger/services/payables"
	"github.com/ledgerplatform/ledger/services/payables/extract"
	"github.com/ledgerplatform/ledger/services/payables/postgres"
)

// Service declares the payables service.
func Service(getenv func(string) string) (daemon.Service, error) {
	return ServiceWith(extract.New(extract.Options{}))(getenv)
}

// ServiceWith declares the payables service reading invoice documents
// with extractor.
func ServiceWith(extractor payables.Extractor) func(func(string) string) (daemon.Service, error) {
	return func(func(string) string) (daemon.Service, error) { return service(extractor), nil }
}

func service(extractor payables.Extractor) daemon.Service {
	return daemon.Service{
		Name: payablesv1.ServiceName,
		DB:   postgres.Schema,
		// The stream its invoice and payment-run events will go to;
		// created now, so that consumers written against it find it.
		Streams: []natsx.Stream{{Name: payablesv1.StreamEvents, Subjects: []string{payablesv1.EventsFilter}}, ExtractStream},
		Build: func(_ context.Context, env daemon.Env) (daemon.Parts, error) {
			store := postgres.New(env.Pool)
			ledger := ledgerv1.Client{C: env.Client}
			c, err := ExtractConfig(env.Getenv)
			if err != nil {
				return daemon.Parts{}, err
			}
			api, err := APIConfig(env.Getenv)
			if err != nil {
				return daemon.Parts{}, err
			}
			x := payables.NewExtractions(store, Ledger{C: env.Client}, extractor, Notifier{NC: env.NC}).WithWait(c.Wait)
			var consumers []natsx.Consumer
			if c.Workers > 0 {
				consumers = append(consumers, ExtractJobs(x, c))
			}
			if !api {
				// An OCR worker: the instance still answers pings (its
				// liveness), but no request is routed to it.
				return daemon.Parts{Consumers: consumers}, nil
			}
			svc := payables.New(store, ledger).
				WithIntake(store, Documents{C: env.Client}, &uploads.Bucket{JS: env.JS}, env.Log, uuid.NewString)
			runs := payables.NewPaymentRuns(store, bankv1.Client{C: env.Client}, tenants{env.Client}, nil)
			routes := append(Routes(svc), IntakeRoutes(svc)...)
			routes = append(routes, ExtractRoutes(x)...)
			routes = append(routes, ReviewRoutes(payables.NewReview(store, ledger, ledger, nil))...)
			routes = append(routes, RunRoutes(runs)...)
			return daemon.Parts{Routes: routes, Consumers: append(consumers, Payments(store))}, nil
		},
	}
}

// Routes is the payables service's route table.
func Routes(svc *payables.Service) []natsx.Route {
	return []natsx.Route{
		{Subject: payablesv1.SubjectVendorsList, Decode: vendorFilter, Endpoint: natsx.Typed(func(ctx context.Context, f payablesv1.VendorFilter) (payablesv1.VendorList, error) {
			return svc.Vendors(ctx, natsx.Claims(ctx).TenantID, f)
		})},
		{Subject: payablesv1.SubjectVendorsCreate, Idempotent: true, Decode: natsx.JSON[payablesv1.VendorInput], Endpoint: natsx.Typed(func(ctx context.Context, in payablesv1.VendorInput) (*natsx.Response, error) {
			idem.Reply(ctx, func(v any) any { return natsx.Created(v) })
			d, err := svc.CreateVendor(ctx, natsx.Claims(ctx).TenantID, in)
			if err != nil {
				return nil, err
			}
			return natsx.Created(d), nil
		})},
		{Subject: payablesv1.SubjectVendorsGet, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (payables.Vendor, error) {
			return svc.Vendor(ctx, natsx.Claims(ctx).TenantID, id)
		})},
		{Subject: payablesv1.SubjectVendorsUpdate, Idempotent: true, Decode: natsx.DecodeWithID[payablesv1.VendorUpdate], Endpoint: natsx.Typed(func(ctx context.Context, r natsx.WithID[payablesv1.VendorUpdate]) (payables.Vendor, error) {
			return svc.UpdateVendor(ctx, natsx.Claims(ctx).TenantID, r.ID, r.Body)
		})},
	}
}

// ExtractRoutes are the routes of extraction.
func ExtractRoutes(x *payables.Extractions) []natsx.Route {
	return []natsx.Route{
		{Subject: payablesv1.SubjectOCRExtract, Decode: natsx.JSON[payablesv1.ExtractInput], Endpoint: natsx.Typed(func(ctx context.Context, in payablesv1.ExtractInput) (payablesv1.OCRResult, error) {
			return x.Extract(ctx, natsx.Claims(ctx).TenantID, in)
		})},
	}
}

// vendorFilter reads the query of GET /v1/vendors.
func vendorFilter(_ context.Context, r *natsx.Request) (any, error) {
	f := payablesv1.VendorFilter{Search: r.Query.Get("search")}
	var err error
	if f.Limit, err = natsx.IntQuery(r.Query, "limit", payables.DefaultVendorsLimit, 1, payables.MaxVendorsLimit); err != nil {
		return nil, err
	}
	if f.Offset, err = natsx.IntQuery(r.Query, "offset", 0, 0, 1<<31-1); err != nil {
		return nil, err
	}
	if f.IsActive, err = natsx.BoolQuery(r.Query, "is_active"); err != nil {
		return nil, err
	}
	if len([]rune(f.Search)) > payables.MaxSearchLength {
		return nil, errs.Invalid("invalid query parameter search", errs.Field("search", "at most 100 characters"))
	}
	return f, nil
}
