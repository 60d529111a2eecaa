// Package eino is the code around the README's "Eino".
package eino

import (
	"context"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/einotools"
	"github.com/toolsafe/toolsafe/policy"
)

type (
	orderQuery struct {
		Order string `json:"order"`
	}
	order struct {
		Order, Status string
	}
)

func _(ctx context.Context, lookupOrder func(context.Context, orderQuery) (order, error)) error {
	// README snippet
	_ = node
	return nil
}
