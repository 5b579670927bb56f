package merchants

import "github.com/kessai/kessai/server/payment"

// Limits are the service's resource limits as configured, for pages that
// name them when one is reached (the console).
func (s *Service) Limits() payment.ResourceLimits { return s.limits }
