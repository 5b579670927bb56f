package payment

// Limits are the service's resource limits as configured, for pages that
// name them when one is reached (the console).
func (s *Service) Limits() ResourceLimits { return s.limits }
