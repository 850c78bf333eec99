package allinone_test

import "testing"

// TestPeriodsIdempotency: mutating periods routes honour Idempotency-Key.
func TestPeriodsIdempotency(t *testing.T) {
	p, key, _ := setup(t, nil, "Idem GmbH")
	task := map[string]any{"period": "2025-03", "title": "Kassenbuch prüfen"}
	first := p.must(201, "POST", "/v1/closing/tasks", key, task, "Idempotency-Key", "task-1")
	again := p.must(201, "POST", "/v1/closing/tasks", key, task, "Idempotency-Key", "task-1")
	if first.str("id") == "" || string(first.Raw) != string(again.Raw) {
		t.Fatalf("replay differs:\n%s\n%s", first.Raw, again.Raw)
	}
	p.wantCount(1, "SELECT count(*) FROM periods.closing_tasks WHERE title = 'Kassenbuch prüfen'")
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/closing/tasks", key, map[string]any{"period": "2025-03", "title": "anders"}, "Idempotency-Key", "task-1")

	lock := p.must(200, "POST", "/v1/periods/2025-04/soft-lock", key, nil, "Idempotency-Key", "lock-1")
	if replay := p.must(200, "POST", "/v1/periods/2025-04/soft-lock", key, nil, "Idempotency-Key", "lock-1"); string(replay.Raw) != string(lock.Raw) {
		t.Fatalf("soft-lock replay differs:\n%s\n%s", lock.Raw, replay.Raw)
	}
	// Without the key the repeat is the state conflict it is.
	p.expectError(409, "PERIOD_ALREADY_SOFT_LOCKED", "POST", "/v1/periods/2025-04/soft-lock", key, nil)
	// The same key on another period is another request.
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/periods/2025-05/soft-lock", key, nil, "Idempotency-Key", "lock-1")
}
