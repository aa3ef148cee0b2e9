// The arguments of the agent resources, for programs that declare agents in TypeScript. The
// config types say the same as the contract's schemas (src/contract), field by field, with a doc
// comment each; the assertions at the end make the build fail if the two ever differ.
import type * as pulumi from "@pulumi/pulumi";
import type { ConversationalAgentConfig, ProceduralAgentConfig } from "../contract/index.ts";

/** Any value, or any field at any depth of it, may be a Pulumi input (a plain value, a promise or an output). */
export type Inputs<T> = T extends readonly (infer Item)[]
  ? pulumi.Input<Inputs<Item>[]>
  : T extends object
    ? pulumi.Input<{ [K in keyof T]: Inputs<T[K]> }>
    : pulumi.Input<T>;

/** The prompt sent to the model. */
export interface PromptArgs {
  /** The prompt text, sent as written. Must not be empty. */
  text: string;
  /** The prompt type; `"fixed"` is the documented value. */
  type: string;
}

/** A tool the agent may call. */
export interface ToolArgs {
  /** The tool's namespace; `"syscall"` is a documented value. */
  ns: string;
  /** The tool's name within its namespace. */
  name: string;
}

/** A conversational agent's configuration: the service's `config`, field for field. */
export interface ConversationalAgentConfigArgs {
  /** Who the agent is on the phone: a name and a voice each. */
  personas?: {
    /** The persona's name, as the agent introduces itself. */
    name: string;
    /** The persona's voice. */
    voice?: {
      /** A voice name, such as a numbered female voice (`"female-2"`). */
      id: string;
      /** Who provides the voice; `"service"` denotes the service's own voices. */
      provider: string;
    };
  }[];
  /** Speech settings. */
  voice?: {
    /** Words the speech recognition should favour (product names, jargon). */
    boosted_keywords?: string[];
    /** A background sound during the call, or null. */
    ambient_sound?: unknown;
    /** The sound played while the agent is busy, or null. */
    busy_sound?: unknown;
  };
  /** The model and what it is told. */
  runtime?: {
    /** `<vendor>/<model name>`, e.g. `"openai/gpt-4o"`; a model without its vendor is refused at preview. */
    model?: string;
    /** The system prompt. */
    prompt?: PromptArgs;
    /** Variables the prompt may use; their values come with each conversation's `context`. */
    variables?: {
      /** The variable's name. */
      name: string;
      /** What it holds, for the model. */
      description?: string;
      /** Its value when a conversation gives none (any JSON value, or null). */
      default_value?: unknown;
    }[];
  };
  /** What the agent can do besides talking. */
  tool?: {
    /** Tools the agent may call. */
    tools?: ToolArgs[];
    /** Where the agent may transfer a call, by transfer id. */
    transfers?: {
      /** The transfer target's id. */
      id: string;
    }[];
  };
  /** Languages. */
  language?: {
    /** The language the agent starts in, e.g. `"English"`. */
    default_language?: string;
    /** Every language the agent may switch to. */
    supported_languages?: string[];
  };
  /** Phone channel settings. */
  channel?: {
    /** Whether the agent leaves a voicemail when nobody answers. */
    is_voicemail_enabled?: boolean;
  };
}

/** A procedural (post-call) agent's configuration: the service's `config`, field for field. */
export interface ProceduralAgentConfigArgs {
  /** Conversation statuses that trigger a run after a conversation, e.g. `["completed"]`. */
  filter_statuses?: string[];
  /** A further condition on the conversation (its shape is the service's), or null. */
  filter_condition?: unknown;
  /** The model and what it is told. */
  runtime?: {
    /** `<vendor>/<model name>`, e.g. `"openai/gpt-4o-mini"`; a model without its vendor is refused at preview. */
    model?: string;
    /** How hard the model thinks, e.g. `"medium"`. */
    reasoning_effort?: string;
    /** The instructions for the run. */
    prompt?: PromptArgs;
  };
  /** Tools the agent may call. */
  tool?: {
    /** Tools the agent may call. */
    tools?: ToolArgs[];
  };
  /** Where the result goes. */
  output?: {
    /** A chat-workspace channel to post the result to, or null. */
    chat_channel?: unknown;
    /** A JSON Schema the result must follow, or null. */
    output_schema?: Record<string, unknown> | null;
    /** An address the result is posted to, or null. */
    post_url?: string | null;
  };
}

/** The inputs of a `ConversationalAgent`: exactly the body of `POST /conversational_agents`. */
export interface ConversationalAgentArgs {
  /** The agent's name on the service. Must not be empty. */
  name: pulumi.Input<string>;
  /** What the agent is for. */
  description: pulumi.Input<string>;
  /** The agent's configuration; any field may be an output of another resource. */
  config: Inputs<ConversationalAgentConfigArgs>;
  /**
   * Procedural agents to run after each conversation, by id: pass other resources' `agentId`
   * outputs (`[summary.agentId]`). A replaced procedural agent has a new id, so this agent is
   * replaced too.
   */
  postprocess_agents?: pulumi.Input<pulumi.Input<string>[]>;
}

/** The inputs of a `ProceduralAgent`: exactly the body of `POST /procedural_agents`. */
export interface ProceduralAgentArgs {
  /** The agent's name on the service (procedures report it). Must not be empty. */
  name: pulumi.Input<string>;
  /** What the agent does. */
  description: pulumi.Input<string>;
  /** The agent's configuration; any field may be an output of another resource. */
  config: Inputs<ProceduralAgentConfigArgs>;
}

// The doc-commented types above and the contract's schemas must describe the same values: a
// difference fails the typecheck here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type ArgsMatchTheContract = [
  Assert<Same<ConversationalAgentConfigArgs, ConversationalAgentConfig>>,
  Assert<Same<ProceduralAgentConfigArgs, ProceduralAgentConfig>>,
];
