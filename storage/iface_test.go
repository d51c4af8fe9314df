package storage_test

import (
	"tessera/object"
	"tessera/storage"
)

var _ object.ShardClient = (*storage.Store)(nil)
