// The entry @pulumi/pulumi's plugin runner loads: serves agent-iac's component provider to the engine.
import { serve } from "../dist/component-provider/index.js";

serve();
