package gateway

// Crash points: a gateway built with the kessai_crashpoints tag (go build
// -tags kessai_crashpoints), started with KESSAI_CRASHPOINT naming a point,
// stops every request that reaches the point: it prints CrashpointMarker
// and the point's name on stderr and never goes on, so that the crash test
// can SIGKILL the process exactly there (crashpoint_on.go). An ordinary
// build has no crash point at all (crashpoint_off.go); no release is built
// with the tag.

// CrashpointEnv names the point to stop at.
const CrashpointEnv = "KESSAI_CRASHPOINT"

// CrashpointMarker starts the line a stopped request prints.
const CrashpointMarker = "KESSAI CRASHPOINT REACHED: "

// CrashpointBeforeAnswerStored is after a request with an Idempotency-Key
// has run (its transaction committed) and before its answer is stored.
const CrashpointBeforeAnswerStored = "idempotency-before-answer-stored"
