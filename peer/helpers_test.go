package peer

import (
	"net/http/httptest"
	"time"
)

func timeNow() time.Time { return time.Now() }

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }
