from sluicegate.gateway.cli import main

raise SystemExit(main())
